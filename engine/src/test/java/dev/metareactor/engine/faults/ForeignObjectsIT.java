package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import dev.metareactor.testing.k8s.LoopbackPorts;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Objects of a child's name that are not the engine's, and names the API server would refuse, on the real control
 * plane, with engines as users run them (the jar, a process each): under server-side apply and dynamic apply, each
 * with and without {@code --sharding} (four engines at once, one CompositeController each, syncing every second),
 * a user's ConfigMap that carries the name of a child (no ownerReferences, no label of ours) keeps its data, labels,
 * ownerReferences, UID and resourceVersion across 60 s of syncs; the parent gets the {@code ChildConflict} Warning
 * and {@code metareactor_child_conflicts_total} counts it. Meanwhile, beside the dynamic-apply engine's parent, a
 * parent whose hook renames its child to {@code ../x} gets a {@code SyncError} naming the name and the rule, and its
 * old child is not deleted.
 */
@LocalKubernetes
class ForeignObjectsIT {

  private static final Logger LOG = LoggerFactory.getLogger(ForeignObjectsIT.class);
  private static final Duration WINDOW = Duration.ofSeconds(60);
  private static final Duration CONVERGE = Duration.ofMinutes(2);

  /** One engine: its apply strategy and whether it shards; {@code name} names its controller, parent and children. */
  private record Combination(String name, String strategy, boolean sharded) {}

  private static final List<Combination> COMBINATIONS = List.of(
      new Combination("ssa", "server-side-apply", false),
      new Combination("ssa-sharded", "server-side-apply", true),
      new Combination("dynamic", "dynamic-apply", false),
      new Combination("dynamic-sharded", "dynamic-apply", true));

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private final Map<String, EngineProcess> engines = new ConcurrentHashMap<>();
  private final Map<String, Integer> metricsPorts = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> syncs = new ConcurrentHashMap<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private HookServer hooks;

  @AfterEach
  void stop() {
    engines.values().forEach(EngineProcess::close);
    if (hooks != null) {
      hooks.close();
    }
  }

  @Test
  void aForeignObjectOfAChildsNameIsNeverWrittenAndAnInvalidNameIsRefusedWhole(LocalCluster cluster)
      throws Exception {
    EngineUnderTest.installCrds(cluster);
    KubernetesClient client = cluster.client();
    hooks = HookServer.builder().route("/sync", this::sync).start();
    Path logs = Files.createDirectories(Path.of("target", "fault-logs", getClass().getSimpleName()));
    ParentCrd sites = ParentCrd.create(cluster, "Site");
    for (Combination combination : COMBINATIONS) {
      client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName(combination.name() + "-taken")
          .addToLabels("app", "mine").endMetadata().addToData("value", "mine").build()).create();
      start(cluster, combination, sites, logs);
      createParent(client, sites, cluster.namespace(), combination.name(), List.of(combination.name() + "-free",
          combination.name() + "-taken"));
    }
    createParent(client, sites, cluster.namespace(), "renamer", List.of("renamer-child"));

    await().atMost(CONVERGE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      for (Combination combination : COMBINATIONS) {
        assertThat(client.configMaps().withName(combination.name() + "-free").get())
            .as(() -> combination.name() + " (engine " + engines.get(combination.name()).state() + ")").isNotNull();
      }
      assertThat(client.configMaps().withName("renamer-child").get()).isNotNull();
    });
    Map<String, ConfigMap> foreign = new ConcurrentHashMap<>();
    for (Combination combination : COMBINATIONS) {
      foreign.put(combination.name(), client.configMaps().withName(combination.name() + "-taken").get());
    }
    String renamedUid = client.configMaps().withName("renamer-child").get().getMetadata().getUid();
    sites.in(client).withName("renamer").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\": {\"children\": [\"../x\"]}}");

    Map<String, Integer> syncsBefore = new ConcurrentHashMap<>();
    syncs.forEach((parent, count) -> syncsBefore.put(parent, count.get()));
    long end = System.nanoTime() + WINDOW.toNanos();
    while (System.nanoTime() < end) {
      Thread.sleep(5_000);
      for (Combination combination : COMBINATIONS) {
        ConfigMap now = client.configMaps().withName(combination.name() + "-taken").get();
        ConfigMap before = foreign.get(combination.name());
        assertThat(now).as("the user's ConfigMap of %s's child's name", combination.name()).isNotNull();
        assertThat(now.getMetadata().getUid()).isEqualTo(before.getMetadata().getUid());
        assertThat(now.getMetadata().getResourceVersion()).as("%s: never written", combination.name())
            .isEqualTo(before.getMetadata().getResourceVersion());
        assertThat(now.getData()).isEqualTo(Map.of("value", "mine"));
        assertThat(now.getMetadata().getLabels()).isEqualTo(Map.of("app", "mine"));
        assertThat(now.getMetadata().getOwnerReferences()).isNullOrEmpty();
      }
    }

    for (Combination combination : COMBINATIONS) {
      assertThat(conflictEvents(client, combination.name())).as("%s: ChildConflict", combination.name())
          .isNotEmpty();
      int synced = syncs.get(combination.name()).get() - syncsBefore.getOrDefault(combination.name(), 0);
      double counted = conflictsCounted(combination.name());
      List<Event> events = conflictEvents(client, combination.name());
      LOG.info("{}: {} syncs in {} s; the user's ConfigMap untouched; {} ChildConflict Event(s) (count {}): {}; "
          + "metareactor_child_conflicts_total {}", combination.name(), synced, WINDOW.toSeconds(), events.size(),
          events.get(0).getCount(), events.get(0).getMessage(), counted);
      assertThat(synced).as("%s: synced throughout the window", combination.name()).isGreaterThan(10);
      assertThat(events.get(0).getMessage()).isEqualTo("ConfigMap " + cluster.namespace() + "/"
          + combination.name() + "-taken exists and is not this parent's: no object controls it; it is left as it is");
      assertThat(counted).as("%s: metareactor_child_conflicts_total{holder=\"none\"}", combination.name())
          .isGreaterThanOrEqualTo(1);
    }

    List<Event> refused = eventsAbout(client, "renamer").stream()
        .filter(event -> "SyncError".equals(event.getReason())).toList();
    assertThat(refused).as("the renamed parent's SyncError").isNotEmpty();
    LOG.info("renamer: {}", refused.get(0).getMessage());
    assertThat(refused.get(0).getMessage()).contains("ConfigMap name \"../x\" is not a DNS-1123 subdomain");
    assertThat(client.configMaps().withName("renamer-child").get()).as("the old child, not deleted for the rename")
        .isNotNull().satisfies(child -> assertThat(child.getMetadata().getUid()).isEqualTo(renamedUid));
  }

  private void start(LocalCluster cluster, Combination combination, ParentCrd sites, Path logs) {
    String hostedBy = run + "-" + combination.name();
    KubernetesClient client = cluster.client();
    GenericKubernetesResource controller = client.getKubernetesSerialization().unmarshal("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %1$s
          labels: {metareactor.dev/hosted-by: %1$s}
        spec:
          generateSelector: true
          resyncPeriodSeconds: 1
          parentResource:
            apiVersion: %2$s
            resource: %3$s
            labelSelector: {matchLabels: {combination: %4$s}}
          childResources:
          - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
          hooks:
            sync: {webhook: {url: "%5$s"}}
        """.formatted(hostedBy, sites.apiVersion(), sites.plural(), combination.name(), hooks.url("/sync")),
        GenericKubernetesResource.class);
    cluster.deleteAfterTest(client.genericKubernetesResources(EngineUnderTest.COMPOSITE_CONTROLLERS)
        .resource(controller).create());
    int metrics = LoopbackPorts.free();
    metricsPorts.put(combination.name(), metrics);
    List<String> flags = new ArrayList<>(List.of("--kubeconfig=" + cluster.kubeconfig(),
        "--metrics-address=127.0.0.1:" + metrics, "--health-probe-bind-address=127.0.0.1:" + LoopbackPorts.free(),
        "--target-label-selector=metareactor.dev/hosted-by=" + hostedBy, "--discovery-interval=1s",
        "--apply-strategy=" + combination.strategy(), "--shutdown-timeout=5s"));
    if (combination.sharded()) {
      flags.addAll(List.of("--sharding", "--shard-name=s1", "--leader-election-namespace=" + cluster.namespace(),
          "--leader-election-id=" + hostedBy));
    }
    engines.put(combination.name(), EngineProcess.start(logs.resolve(combination.name() + ".log"),
        flags.toArray(String[]::new)));
  }

  private static void createParent(KubernetesClient client, ParentCrd sites, String namespace, String name,
      List<String> children) {
    var parent = sites.object(namespace, name, Map.of("children", children));
    String combination = name.equals("renamer") ? "dynamic" : name;
    parent.getMetadata().setLabels(Map.of("combination", combination));
    sites.in(client).resource(parent).create();
  }

  /** The sync hook: a ConfigMap for each name in the parent's {@code spec.children}. */
  private JsonNode sync(JsonNode request) {
    JsonNode parent = request.path("parent");
    String name = parent.path("metadata").path("name").asString();
    syncs.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
    ObjectNode answer = KubeJson.nodes().objectNode();
    ArrayNode children = answer.putArray("children");
    for (JsonNode child : parent.path("spec").path("children")) {
      ObjectNode configMap = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      configMap.putObject("metadata").put("name", child.asString());
      configMap.putObject("data").put("value", name);
    }
    answer.putObject("status").put("children", children.size());
    return answer;
  }

  private static List<Event> eventsAbout(KubernetesClient client, String name) {
    return client.v1().events().list().getItems().stream()
        .filter(event -> name.equals(event.getInvolvedObject().getName())).toList();
  }

  private static List<Event> conflictEvents(KubernetesClient client, String parent) {
    return eventsAbout(client, parent).stream().filter(event -> "ChildConflict".equals(event.getReason())
        && "Warning".equals(event.getType())).toList();
  }

  /** {@code metareactor_child_conflicts_total{holder="none"}} of the combination's engine, summed. */
  private double conflictsCounted(String combination) throws Exception {
    int port = Objects.requireNonNull(metricsPorts.get(combination), combination);
    String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString()).body();
    Pattern series = Pattern.compile("^metareactor_child_conflicts_total\\{([^}]*)} ([0-9.eE+-]+)$");
    double sum = 0;
    for (String line : body.lines().toList()) {
      Matcher matcher = series.matcher(line);
      if (matcher.matches() && matcher.group(1).contains("holder=\"none\"")) {
        sum += Double.parseDouble(matcher.group(2));
      }
    }
    return sum;
  }
}
