package dev.metareactor.engine.preview;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.metareactor.engine.cli.PreviewCommand;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * {@code metareactor preview} on the real control plane, with no engine running: every write each parent's sync
 * would make is shown (creates with the object, status and updates as merge diffs), the exit code says whether
 * anything would be written, and the API server's audit log shows that the preview's only mutating requests were
 * dry runs — nothing was written. For all three kinds, both apply strategies, a new hook version tried with
 * {@code --hook-url}, a failing hook, and the kubectl plugin.
 */
@LocalKubernetes
class PreviewIT {

  private static final Logger LOG = LoggerFactory.getLogger(PreviewIT.class);
  private static final List<String> MUTATING = List.of("create", "update", "patch", "delete", "deletecollection");

  private final String run = UUID.randomUUID().toString().substring(0, 6);
  private LocalCluster cluster;
  private KubernetesClient client;
  private HookServer hooks;
  private ParentCrd sites;

  @BeforeEach
  void start(LocalCluster cluster) {
    assumeTrue(cluster.controlPlane().managed(), "the audit log of a control plane of our own");
    this.cluster = cluster;
    this.client = cluster.client();
    EngineUnderTest.installCrds(cluster);
    sites = ParentCrd.create(cluster, "Site");
    hooks = HookServer.builder()
        .route("/sync", request -> answer(request, ""))
        .route("/sync-v2", request -> answer(request, "-v2"))
        .route("/decorate", request -> {
          ObjectNode answer = KubeJson.nodes().objectNode();
          answer.putObject("labels").put("decorated", "yes");
          return answer;
        })
        .route("/map", request -> {
          ObjectNode answer = KubeJson.nodes().objectNode();
          String input = request.path("input").path("metadata").path("name").asString();
          ObjectNode output = answer.putArray("outputs").addObject().put("apiVersion", sites.apiVersion())
              .put("kind", sites.kind());
          output.putObject("metadata").put("name", "out-" + input);
          output.putObject("spec").put("value", request.path("input").path("data").path("value").asString());
          return answer;
        })
        .route("/customize", request -> KubeJson.mapper().readTree("""
            {"relatedResources": [{"apiVersion": "v1", "resource": "configmaps",
                                   "labelSelector": {"matchLabels": {"related": "%s"}}}]}""".formatted(run)))
        .route("/sync-related", request -> {
          // One ConfigMap naming the related ConfigMaps the sync was shown.
          ObjectNode answer = KubeJson.nodes().objectNode();
          ObjectNode child = answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
          child.putObject("metadata").put("name", request.path("parent").path("metadata").path("name").asString()
              + "-related");
          child.putObject("data").put("names", String.join(",", request.path("related").path("ConfigMap.v1")
              .propertyNames()));
          return answer;
        })
        .route("/broken", request -> {
          throw new IllegalStateException("this hook version is broken");
        })
        .start();
  }

  @AfterEach
  void stop() {
    if (hooks != null) {
      hooks.close();
    }
  }

  /** The sync hook: a ConfigMap for each name in {@code spec.children} (with {@code suffix}), and their count. */
  private static JsonNode answer(JsonNode request, String suffix) {
    JsonNode parent = request.path("parent");
    ObjectNode answer = KubeJson.nodes().objectNode();
    ArrayNode children = answer.putArray("children");
    for (JsonNode name : parent.path("spec").path("children")) {
      for (String variant : suffix.isEmpty() ? List.of("") : List.of("", suffix)) {
        ObjectNode child = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
        child.putObject("metadata").put("name", name.asString() + variant);
        child.putObject("data").put("value", parent.path("metadata").path("name").asString());
      }
    }
    answer.putObject("status").put("children", children.size());
    return answer;
  }

  @ParameterizedTest
  @ValueSource(strings = {"dynamic-apply", "server-side-apply"})
  void everyWriteOfEachParentIsShownAndNothingIsWritten(String strategy) throws Exception {
    String controller = composite("/sync");
    site("changing", List.of("changing-" + run));
    site("settled", List.of());
    // What the engine would write: the hook's status and the generation it answers for.
    sites.in(client).withName("settled").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"status\": {\"children\": 0, \"observedGeneration\": 1}}");

    long auditFrom = auditSize();
    Output preview = preview("--controller", "compositecontroller/" + controller, "-o", "json",
        "--apply-strategy", strategy);

    assertThat(preview.exit()).as("something would be written; stderr: %s", preview.err()).isEqualTo(1);
    JsonNode changing = parent(preview.json(), "changing");
    assertThat(changing.path("result").asString()).isEqualTo("synced");
    JsonNode create = write(changing, "create", "ConfigMap", "changing-" + run);
    assertThat(create.path("dryRun").asBoolean()).isTrue();
    assertThat(create.path("diff").path("data").path("value").asString()).isEqualTo("changing");
    assertThat(create.path("diff").path("metadata").path("ownerReferences").get(0).path("name").asString())
        .as("the ControllerRef the engine gives a child").isEqualTo("changing");
    JsonNode status = write(changing, "status", "Site", "changing");
    assertThat(status.path("diff").path("status").path("children").asInt()).isEqualTo(1);
    JsonNode settled = parent(preview.json(), "settled");
    assertThat(settled.path("writes")).as("a parent whose status is already the answer's").allSatisfy(write ->
        assertThat(write.path("changes").asBoolean()).isFalse());
    assertThat(preview.json().path("summary").path("wouldChange").asInt()).isEqualTo(1);

    assertThat(client.configMaps().withName("changing-" + run).get()).as("nothing created").isNull();
    assertThat(sites.in(client).withName("changing").get().getAdditionalProperties()).doesNotContainKey("status");
    List<JsonNode> requests = auditedSince(auditFrom);
    assertThat(requests.stream().filter(PreviewIT::mutating).filter(request -> !dryRun(request)).toList())
        .as("mutating requests other than dry runs").isEmpty();
    assertThat(requests.stream().filter(PreviewIT::mutating).filter(PreviewIT::dryRun).count())
        .as("the dry runs of the create and the status").isGreaterThanOrEqualTo(2);

    Output one = preview("--controller", "compositecontroller/" + controller, "--parent",
        cluster.namespace() + "/settled", "--apply-strategy", strategy);
    assertThat(one.exit()).as("nothing would be written; stderr: %s", one.err()).isZero();
    assertThat(one.out()).contains("Site " + cluster.namespace() + "/settled: no change")
        .doesNotContain("changing");
  }

  @Test
  void aNewHookVersionIsTriedWithHookUrlAndAFailingOneExitsWithTwo() throws Exception {
    String controller = composite("/sync");
    site("tried", List.of("tried-" + run));

    Output v2 = preview("--controller", "compositecontroller/" + controller, "--hook-url", hooks.url("/sync-v2"),
        "-o", "json");
    assertThat(v2.exit()).as("stderr: %s", v2.err()).isEqualTo(1);
    JsonNode tried = parent(v2.json(), "tried");
    write(tried, "create", "ConfigMap", "tried-" + run);
    write(tried, "create", "ConfigMap", "tried-" + run + "-v2");

    Output text = preview("--controller", "compositecontroller/" + controller, "--hook-url", hooks.url("/sync-v2"),
        "--color", "never");
    LOG.info("metareactor preview --hook-url {}:\n{}", hooks.url("/sync-v2"), text.out());
    assertThat(text.out()).contains("create  v1 ConfigMap " + cluster.namespace() + "/tried-" + run + "-v2")
        .contains("+ data:").contains("status  " + sites.apiVersion() + " Site " + cluster.namespace() + "/tried")
        .contains("1 of 1 parent would change (2 create ConfigMap, 1 status Site)");

    Output broken = preview("--controller", "compositecontroller/" + controller, "--hook-url",
        hooks.url("/broken"), "-o", "json");
    assertThat(broken.exit()).as("a failed sync; stderr: %s", broken.err()).isEqualTo(2);
    JsonNode failed = parent(broken.json(), "tried");
    assertThat(failed.path("result").asString()).isEqualTo("failed");
    assertThat(failed.path("events").get(0).path("reason").asString()).isEqualTo("SyncError");
    assertThat(failed.path("writes")).isEmpty();
  }

  @Test
  void aControllerWithACustomizeHookIsPreviewedWithItsRelatedObjects() throws Exception {
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("shown-" + run)
        .addToLabels("related", run).endMetadata().build()).create();
    String controller = composite("/sync-related", "/customize");
    site("reading", List.of());

    // The related informer starts with the first sync: the preview's sync waits for it rather than failing.
    Output preview = preview("--controller", "compositecontroller/" + controller, "-o", "json");
    assertThat(preview.exit()).as("stdout: %s%nstderr: %s", preview.out(), preview.err()).isEqualTo(1);
    JsonNode reading = parent(preview.json(), "reading");
    assertThat(reading.path("result").asString()).isEqualTo("synced");
    assertThat(write(reading, "create", "ConfigMap", "reading-related").path("diff").path("data").path("names")
        .asString()).isEqualTo("shown-" + run);
  }

  @Test
  void decoratorAndMapControllersArePreviewedToo() throws Exception {
    String decorated = "decorated-" + run;
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName(decorated)
        .addToLabels("decorate", run).endMetadata().addToData("value", "x").build()).create();
    String decorator = "pv-dec-" + run;
    create(EngineUnderTest.DECORATOR_CONTROLLERS, """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata: {name: %s}
        spec:
          resources:
          - apiVersion: v1
            resource: configmaps
            labelSelector: {matchLabels: {decorate: "%s"}}
          hooks:
            sync: {webhook: {url: "%s"}}
        """.formatted(decorator, run, hooks.url("/decorate")));

    Output decoration = preview("--controller", "decoratorcontroller/" + decorator, "-o", "json");
    assertThat(decoration.exit()).as("stderr: %s", decoration.err()).isEqualTo(1);
    JsonNode labelled = write(parent(decoration.json(), decorated), "update", "ConfigMap", decorated);
    assertThat(labelled.path("diff").path("metadata").path("labels").path("decorated").asString()).isEqualTo("yes");
    assertThat(client.configMaps().withName(decorated).get().getMetadata().getLabels())
        .doesNotContainKey("decorated");

    String team = "team-" + run;
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("input-" + run)
        .addToLabels("team", team).endMetadata().addToData("value", "mapped").build()).create();
    site("schedule", List.of(), Map.of("selector", Map.of("matchLabels", Map.of("team", team))));
    String map = "pv-map-" + run;
    create(EngineUnderTest.MAP_CONTROLLERS, """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: MapController
        metadata: {name: %s}
        spec:
          parentResource: {apiVersion: %s, resource: %s}
          inputResources:
          - {apiVersion: v1, resource: configmaps}
          outputResources:
          - {apiVersion: %s, resource: %s, updateStrategy: {method: InPlace}}
          hooks:
            map: {webhook: {url: "%s"}}
        """.formatted(map, sites.apiVersion(), sites.plural(), sites.apiVersion(), sites.plural(),
        hooks.url("/map")));

    Output mapping = preview("--controller", "mapcontroller/" + map, "-o", "json");
    assertThat(mapping.exit()).as("stderr: %s", mapping.err()).isEqualTo(1);
    JsonNode output = mapping.json().path("parents").valueStream()
        .flatMap(parent -> parent.path("writes").valueStream())
        .filter(write -> write.path("name").asString().equals("out-input-" + run))
        .findFirst().orElseThrow(() -> new AssertionError("no write of the map's output in " + mapping.out()));
    assertThat(output.path("verb").asString()).isEqualTo("create");
    assertThat(output.path("diff").path("spec").path("value").asString()).isEqualTo("mapped");
    assertThat(sites.in(client).withName("out-input-" + run).get()).as("nothing created").isNull();
  }

  @Test
  void theKubectlPluginRunsThePreview(@TempDir Path home) throws Exception {
    String controller = composite("/sync");
    site("plugged", List.of("plugged-" + run));
    Path plugin = cluster.controlPlane().repoRoot().resolve("engine/bin/kubectl-metareactor");
    ProcessBuilder builder = new ProcessBuilder(plugin.toString(), "preview", "--kubeconfig",
        engineKubeconfig().toString(), "--controller", "compositecontroller/" + controller, "-o", "yaml")
        .redirectError(home.resolve("stderr").toFile());
    builder.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    builder.environment().put("METAREACTOR_CDS", "off");
    Process process = builder.start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(process.exitValue()).as("stdout: %s%nstderr: %s", out, Files.readString(home.resolve("stderr")))
        .isEqualTo(1);
    JsonNode yaml = YAMLMapper.builder().build().readTree(out);
    write(parent(yaml, "plugged"), "create", "ConfigMap", "plugged-" + run);
  }

  // ---- helpers

  private record Output(int exit, String out, String err) {
    JsonNode json() {
      return KubeJson.mapper().readTree(out);
    }
  }

  /** Runs {@code metareactor preview} in this JVM as the engine's identity, whose requests the audit log records. */
  private Output preview(String... args) {
    List<String> all = new ArrayList<>(List.of("--kubeconfig", engineKubeconfig().toString()));
    all.addAll(List.of(args));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = PreviewCommand.execute(all.toArray(String[]::new), new PrintWriter(out, true),
        new PrintWriter(err, true));
    return new Output(exit, out.toString(), err.toString());
  }

  private String composite(String hook) {
    return composite(hook, null);
  }

  /** A CompositeController of Sites with ConfigMap children, its sync hook at {@code hook}, and a customize one. */
  private String composite(String hook, @Nullable String customize) {
    String name = "pv-" + run + "-" + UUID.randomUUID().toString().substring(0, 4);
    String customizeHook = customize == null ? "" : "\n    customize: {webhook: {url: \"" + hooks.url(customize)
        + "\"}}";
    create(EngineUnderTest.COMPOSITE_CONTROLLERS, """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata: {name: %s}
        spec:
          generateSelector: true
          parentResource: {apiVersion: %s, resource: %s}
          childResources:
          - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
          hooks:
            sync: {webhook: {url: "%s"}}%s
        """.formatted(name, sites.apiVersion(), sites.plural(), hooks.url(hook), customizeHook));
    return name;
  }

  private void create(ResourceDefinitionContext resource, String yaml) {
    GenericKubernetesResource object = client.getKubernetesSerialization().unmarshal(yaml,
        GenericKubernetesResource.class);
    cluster.deleteAfterTest(client.genericKubernetesResources(resource).resource(object).create());
  }

  private void site(String name, List<String> children) {
    site(name, children, Map.of());
  }

  private void site(String name, List<String> children, Map<String, Object> more) {
    Map<String, Object> spec = new java.util.LinkedHashMap<>(more);
    spec.put("children", children);
    sites.in(client).resource(sites.object(cluster.namespace(), name, spec)).create();
  }

  private static JsonNode parent(JsonNode preview, String name) {
    return preview.path("parents").valueStream().filter(parent -> parent.path("name").asString().equals(name))
        .findFirst().orElseThrow(() -> new AssertionError("no parent " + name + " in " + preview));
  }

  private static JsonNode write(JsonNode parent, String verb, String kind, String name) {
    return parent.path("writes").valueStream()
        .filter(write -> write.path("verb").asString().equals(verb) && write.path("kind").asString().equals(kind)
            && write.path("name").asString().equals(name))
        .findFirst().orElseThrow(() -> new AssertionError("no " + verb + " of " + kind + " " + name + " in "
            + parent));
  }

  private Path engineKubeconfig() {
    return cluster.controlPlane().localClusterState().resolve("engine.kubeconfig");
  }

  private Path auditLog() {
    return cluster.controlPlane().localClusterState().resolve("logs/audit.log");
  }

  private long auditSize() throws IOException {
    return Files.exists(auditLog()) ? Files.size(auditLog()) : 0;
  }

  /** The requests the audit log recorded after {@code offset}, once its batches (1 s at most) are written. */
  private List<JsonNode> auditedSince(long offset) throws Exception {
    Thread.sleep(2_500);
    byte[] all = Files.readAllBytes(auditLog());
    String since = new String(all, (int) offset, all.length - (int) offset, StandardCharsets.UTF_8);
    return since.lines().filter(line -> line.startsWith("{")).map(line -> KubeJson.mapper().readTree(line))
        .toList();
  }

  private static boolean mutating(JsonNode request) {
    return MUTATING.contains(request.path("verb").asString());
  }

  private static boolean dryRun(JsonNode request) {
    return request.path("requestURI").asString().contains("dryRun=All");
  }
}
