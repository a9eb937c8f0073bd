package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A CompositeController whose sync hook is a CEL expression, hosted as the engine hosts it over in-memory informers
 * and API: its answer goes down the webhook path, so a CEL controller and a webhook controller answering the same
 * thing write the same requests, byte for byte; an expression over its budget is a {@code SyncError} and writes
 * nothing; one that does not compile is refused when the controller object is read, naming the position.
 */
class CelHookTest {

  private static final ApiResource THINGS = CompositeSyncFixture.THINGS;
  private static final ApiResource CONFIG_MAPS = CompositeSyncFixture.CONFIG_MAPS;
  private static final String NAMESPACE = CompositeSyncFixture.NAMESPACE;

  /** One ConfigMap per parent with a greeting and the hash of the parent's spec, and a status. */
  private static final String GREETER = """
      {'children': [{'apiVersion': 'v1', 'kind': 'ConfigMap',
                     'metadata': {'name': parent.metadata.name + '-greeting', 'labels': {'app': 'greeter'}},
                     'data': {'greeting': 'Hello, %s!'.format([parent.spec.who]), 'spec': sha256(parent.spec)}}],
       'status': {'greeted': parent.spec.who, 'observed': children['ConfigMap.v1'].size()}}""";

  private final HookServer webhook = HookServer.builder().route("/sync", CelHookTest::greeter).start();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());

  @AfterEach
  void close() {
    hooks.close();
    webhook.close();
  }

  /** {@link #GREETER} written in Java, as a webhook. */
  private static JsonNode greeter(JsonNode request) {
    JsonNode parent = request.path("parent");
    ObjectNode answer = KubeJson.nodes().objectNode();
    ObjectNode child = answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
    child.putObject("metadata").put("name", parent.at("/metadata/name").asString() + "-greeting")
        .putObject("labels").put("app", "greeter");
    child.putObject("data").put("greeting", "Hello, " + parent.at("/spec/who").asString() + "!")
        .put("spec", sha256(canonical(parent.path("spec"))));
    answer.putObject("status").put("greeted", parent.at("/spec/who").asString())
        .put("observed", request.at("/children/ConfigMap.v1").size());
    return answer;
  }

  /** A flat object's JSON with its keys sorted: what CEL's {@code sha256} hashes. */
  private static String canonical(JsonNode flat) {
    return KubeJson.mapper().writeValueAsString(KubeJson.mapper().convertValue(flat, TreeMap.class));
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aCelControllerWritesWhatAWebhookControllerAnsweringTheSameWrites() {
    String hook = "{\"webhook\": {\"url\": \"" + webhook.url("/sync") + "\"}}";
    List<RecordingApi.Action> byWebhook = sync(hook, true);
    List<RecordingApi.Action> byCel = sync("{\"cel\": {\"expression\": " + KubeJson.quote(GREETER) + "}}", true);

    assertThat(byWebhook).as("the webhook controller's writes").extracting(RecordingApi.Action::verb)
        .contains("create");
    assertThat(byCel).as("the CEL controller's writes, bodies byte for byte").extracting(RecordingApi.Action::body)
        .isEqualTo(byWebhook.stream().map(RecordingApi.Action::body).toList());
    assertThat(byCel).as("the CEL controller's writes").isEqualTo(byWebhook);
  }

  @Test
  void anEvaluationOverItsCostLimitIsASyncErrorAndWritesNothing() {
    RecordingApi api = new RecordingApi();
    List<RecordingApi.Action> writes = sync(api, "{\"cel\": {\"expression\": " + KubeJson.quote(GREETER)
        + ", \"costLimit\": 5}}", false);

    assertThat(writes).as("writes but Events").isEmpty();
    assertThat(api.actions()).filteredOn(action -> action.resource().equals("events"))
        .extracting(action -> KubeJson.mapper().readTree(action.body()).path("message").asString())
        .contains("Sync error: sync hook: the CEL hook went over its cost limit of 5");
  }

  @Test
  void anExpressionThatDoesNotCompileIsRefusedNamingWhere() {
    assertThatThrownBy(() -> controller(new RecordingApi(), new FakeInformers(), new SimpleMeterRegistry(),
        "{\"cel\": {\"expression\": \"{'children': [parent.metadata.nam +]}\"}}"))
        .isInstanceOf(InvalidControllerException.class)
        .hasMessageStartingWith("spec.hooks.sync.cel.expression: 1:36: mismatched input ']'");
    assertThatThrownBy(() -> controller(new RecordingApi(), new FakeInformers(), new SimpleMeterRegistry(),
        "{\"cel\": {\"expression\": \"{}\"}, \"webhook\": {\"url\": \"http://h/\"}}"))
        .isInstanceOf(InvalidControllerException.class)
        .hasMessage("spec.hooks.sync: webhook and cel are mutually exclusive; set one");
  }

  /**
   * An evaluation over its time budget fails its own parent's sync, a {@code SyncError}, and gives the worker back:
   * with a single worker, a second parent still converges while the first keeps failing (its expression, unbounded,
   * would run for minutes).
   */
  @Test
  void anEvaluationOverItsTimeoutIsASyncErrorAndTheOnlyWorkerGoesOnToTheNextParent() {
    String hundred = IntStream.range(0, 100).mapToObj(Integer::toString).collect(Collectors.joining(", ", "[", "]"));
    String endless = "%1$s.map(a, %1$s.map(b, %1$s.map(c, %1$s.map(d, a + b + c + d)))).size()".formatted(hundred);
    String hook = "{\"cel\": {\"timeout\": \"100ms\", \"costLimit\": 9000000000000000000, \"expression\": "
        + KubeJson.quote("parent.spec.who == 'slow' ? {'status': {'n': " + endless + "}} : " + GREETER) + "}}";
    RecordingApi api = new RecordingApi();
    FakeInformers informers = new FakeInformers();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    HostedController controller = controller(api, informers, meters, hook, EngineCommand.parse("--workers=1"));
    try {
      controller.start().subscribe();
      await().atMost(Duration.ofSeconds(30)).until(() -> controller.phase() == HostedController.Phase.RUNNING);
      for (String name : List.of("slow", "quick")) {
        KubeObject parent = parent(name, name.equals("slow") ? "slow" : "World");
        api.holding(THINGS, parent);
        informers.of(THINGS).put(parent).deliver(added(parent));
      }

      await().atMost(Duration.ofSeconds(30)).until(() -> api.actions().stream().anyMatch(action ->
          action.verb().equals("create") && action.body().contains("quick-greeting")));
      await().atMost(Duration.ofSeconds(30)).until(() -> api.actions().stream()
          .filter(action -> action.resource().equals("events"))
          .map(action -> KubeJson.mapper().readTree(action.body()))
          .anyMatch(event -> event.at("/involvedObject/name").asString().equals("slow") && event.path("message")
              .asString().equals("Sync error: sync hook: the CEL hook went over its timeout of 100 ms")));
    } finally {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
  }

  private static KubeObject parent(String name, String who) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "%s", "namespace": "%s", "uid": "%s-uid", "generation": 1, "resourceVersion": "7"},
         "spec": {"who": "%s", "size": 2}}""".formatted(name, NAMESPACE, name, who)));
  }

  private List<RecordingApi.Action> sync(String hook, boolean succeeds) {
    return sync(new RecordingApi(), hook, succeeds);
  }

  /** The writes but Events of one sync of a parent by a controller with this sync hook. */
  private List<RecordingApi.Action> sync(RecordingApi api, String hook, boolean succeeds) {
    FakeInformers informers = new FakeInformers();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    HostedController controller = controller(api, informers, meters, hook, EngineCommand.parse());
    try {
      controller.start().subscribe();
      await().atMost(Duration.ofSeconds(30)).until(() -> controller.phase() == HostedController.Phase.RUNNING);
      KubeObject parent = parent("p", "World");
      api.holding(THINGS, parent);
      informers.of(THINGS).put(parent).deliver(added(parent));
      String result = succeeds ? "success" : "error";
      await().atMost(Duration.ofSeconds(30)).until(() -> meters.find("controller_runtime.reconcile")
          .tag("result", result).counters().stream().mapToDouble(Counter::count).sum() >= 1);
      return api.actions().stream().filter(action -> !action.resource().equals("events")).toList();
    } finally {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
  }

  private HostedController controller(RecordingApi api, FakeInformers informers, SimpleMeterRegistry meters,
      String hook) {
    return controller(api, informers, meters, hook, EngineCommand.parse());
  }

  private HostedController controller(RecordingApi api, FakeInformers informers, SimpleMeterRegistry meters,
      String hook, EngineOptions options) {
    ControllerContext context = new ControllerContext(options, new FixedDiscovery(THINGS, CONFIG_MAPS),
        informers, api, new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"),
        hooks, meters, Scheduling.production());
    return CompositeController.kind().factory().create(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "greeter", "uid": "controller-uid"},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": %s}}}""".formatted(hook))), context);
  }
}
