package dev.metareactor.engine.preview;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.ReplayCommand;
import dev.metareactor.engine.controller.SyncRecorder;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code --record-syncs} and {@code metareactor replay} on the real control plane: a controller annotated
 * {@code metareactor.dev/record-syncs: "true"} gets one file per sync with the hook's request and answer and the
 * writes made, Secret data and the hook URL's credentials redacted, the directory capped; replaying the records to
 * the same hook finds every answer the same (exit 0), to a new version the one that differs (exit 1), to a failing
 * hook an error (exit 2).
 */
@LocalKubernetes
class RecordReplayIT {

  private final String run = UUID.randomUUID().toString().substring(0, 6);
  private EngineUnderTest engine;
  private HookServer hooks;

  @AfterEach
  void stop() {
    if (engine != null) {
      engine.close();
    }
    if (hooks != null) {
      hooks.close();
    }
  }

  private static JsonNode answer(JsonNode request, String value) {
    String parent = request.path("parent").path("metadata").path("name").asString();
    ObjectNode answer = KubeJson.nodes().objectNode();
    var children = answer.putArray("children");
    ObjectNode configMap = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
    configMap.putObject("metadata").put("name", parent + "-config");
    configMap.putObject("data").put("value", value);
    ObjectNode secret = children.addObject().put("apiVersion", "v1").put("kind", "Secret");
    secret.putObject("metadata").put("name", parent + "-secret");
    secret.putObject("stringData").put("password", "hunter2");
    answer.putObject("status").put("children", children.size());
    return answer;
  }

  @Test
  void recordedSyncsReplaySameToTheSameHookAndDifferToANewOne(LocalCluster cluster, @TempDir Path records)
      throws Exception {
    KubernetesClient client = cluster.client();
    ParentCrd sites = ParentCrd.create(cluster, "Site");
    hooks = HookServer.builder()
        .route("/sync", request -> answer(request, "v1"))
        .route("/sync-v2", request -> answer(request, "v2"))
        .route("/broken", request -> {
          throw new IllegalStateException("broken");
        })
        .start();
    engine = EngineUnderTest.start(cluster, "--record-syncs=" + records, "--record-syncs-max-size=40Ki");
    String url = hooks.url("/sync").replace("http://", "http://recorder:s3cret@");
    String controller = "rec-" + run;
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %s
          annotations: {metareactor.dev/record-syncs: "true"}
        spec:
          generateSelector: true
          resyncPeriodSeconds: 1
          parentResource: {apiVersion: %s, resource: %s}
          childResources:
          - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
          - {apiVersion: v1, resource: secrets, updateStrategy: {method: InPlace}}
          hooks:
            sync: {webhook: {url: "%s"}}
        """.formatted(controller, sites.apiVersion(), sites.plural(), url));
    sites.in(client).resource(sites.object(cluster.namespace(), "recorded", Map.of("note", "x"))).create();
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> client.configMaps().withName("recorded-config").get() != null
        && client.secrets().withName("recorded-secret").get() != null);
    Secret written = client.secrets().withName("recorded-secret").get();
    assertThat(written.getData()).as("the real Secret is written whole").containsKey("password");

    Path dir = records.resolve("compositecontroller-" + controller);
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> files(dir).stream().anyMatch(RecordReplayIT::wroteTheChild));
    JsonNode first = files(dir).stream().map(RecordReplayIT::read).filter(RecordReplayIT::wroteTheChildNode)
        .findFirst().orElseThrow();
    assertThat(first.path("format").asString()).isEqualTo(SyncRecorder.FORMAT);
    assertThat(first.path("object").path("name").asString()).isEqualTo("recorded");
    JsonNode exchange = first.path("exchanges").get(0);
    assertThat(exchange.path("request").path("parent").path("metadata").path("name").asString())
        .isEqualTo("recorded");
    assertThat(exchange.path("request").path("controller").path("spec").path("hooks").path("sync").path("webhook")
        .path("url").asString()).as("the hook's credentials redacted").doesNotContain("s3cret")
        .isEqualTo(hooks.url("/sync"));
    assertThat(exchange.path("answer").path("children").get(1).path("stringData").path("password").asString())
        .isEqualTo(SyncRecorder.REDACTED);
    assertThat(first.toString()).doesNotContain("hunter2").doesNotContain("s3cret");

    // A resync a second: the directory stays within its cap, the oldest files going first.
    Thread.sleep(8_000);
    long size = 0;
    for (Path file : files(dir)) {
      size += Files.exists(file) ? Files.size(file) : 0;
    }
    assertThat(size).as("the records of one controller, capped at 40Ki").isLessThanOrEqualTo(40 * 1024 + 8 * 1024);
    // Later syncs show the hook the Secret as observed (raw JSON in the request, its data base64-encoded, and the
    // copy dynamic apply keeps in an annotation): no record holds it.
    for (Path file : files(dir)) {
      assertThat(read(file).toString()).as("%s", file).doesNotContain("hunter2").doesNotContain("aHVudGVyMg==");
    }

    engine.close();
    engine = null;
    Output same = replay("--hook-url", hooks.url("/sync"), records.toString());
    assertThat(same.exit()).as("%s%s", same.out(), same.err()).isZero();
    assertThat(same.out()).contains(" 0 differ, 0 failed");

    Output differs = replay("--hook-url", hooks.url("/sync-v2"), "-o", "json", dir.toString());
    assertThat(differs.exit()).as("%s%s", differs.out(), differs.err()).isEqualTo(1);
    JsonNode report = KubeJson.mapper().readTree(differs.out());
    assertThat(report.path("records").get(0).path("difference").asString())
        .isEqualTo("v1 ConfigMap recorded-config .data.value: \"v1\" (recorded) vs \"v2\" (replayed)");

    Output broken = replay("--hook-url", hooks.url("/broken"), dir.toString());
    assertThat(broken.exit()).as("%s%s", broken.out(), broken.err()).isEqualTo(2);
    assertThat(broken.out()).contains("the hook answered HTTP 500");
  }

  private record Output(int exit, String out, String err) {}

  private static Output replay(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = ReplayCommand.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Output(exit, out.toString(), err.toString());
  }

  private static List<Path> files(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> list = Files.list(dir)) {
      return list.filter(file -> file.toString().endsWith(".json")).sorted().toList();
    }
  }

  private static JsonNode read(Path file) {
    try {
      return KubeJson.mapper().readTree(Files.readAllBytes(file));
    } catch (NoSuchFileException e) {
      return KubeJson.nodes().objectNode(); // removed by the cap since it was listed
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean wroteTheChild(Path file) {
    return wroteTheChildNode(read(file));
  }

  private static boolean wroteTheChildNode(JsonNode record) {
    return record.path("writes").valueStream().anyMatch(write -> write.path("verb").asString().equals("create")
        && write.path("name").asString().endsWith("-config"));
  }
}
