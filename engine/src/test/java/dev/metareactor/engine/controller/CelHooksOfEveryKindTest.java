package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.controller.decorator.DecoratorController;
import dev.metareactor.engine.controller.map.MapController;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The CEL hooks beyond the CompositeController sync hook ({@code CelHookTest}), each hosted as the engine hosts it
 * over in-memory informers and API: a CompositeController's finalize hook (its {@code finalized: true} takes the
 * finalizer off the parent), its customize hook (the related objects it asks for reach the sync expression), a
 * DecoratorController's sync hook (labels and attachments of the target) and a MapController's map hook (outputs of
 * an input). Each expression reads the variables of its hook's request; where the answer is a fixed one, a webhook
 * answering it is hosted too and both write the same requests, byte for byte.
 */
class CelHooksOfEveryKindTest {

  private static final String NAMESPACE = "team";
  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource SERVICES = new ApiResource("", "v1", "services", "Service", true, Set.of("status"));
  private static final ApiResource SCHEDULES =
      new ApiResource("test.metareactor.dev", "v1", "schedules", "Schedule", true, Set.of("status"));
  private static final ApiResource OUTPUTS =
      new ApiResource("test.metareactor.dev", "v1", "outputs", "Output", true, Set.of("status"));
  private static final String FINALIZER = "metacontroller.io/compositecontroller-things";

  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final HookServer webhook = HookServer.builder()
      .route("/finalized", request -> json("{\"children\": [], \"finalized\": true}"))
      .route("/decorate", request -> json("""
          {"labels": {"decorated-by": "cel"},
           "attachments": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s-ports"},
                            "data": {"port": "8080", "seen": "0"}}]}"""))
      .route("/map", request -> json("""
          {"outputs": [{"apiVersion": "test.metareactor.dev/v1", "kind": "Output", "metadata": {"name": "mine-in-1"},
                        "spec": {"value": "v1", "key": "input-uid"}}]}"""))
      .start();

  @AfterEach
  void close() {
    hooks.close();
    webhook.close();
  }

  private static JsonNode json(String text) {
    return KubeJson.mapper().readTree(text);
  }

  private static String cel(String expression) {
    return "{\"cel\": {\"expression\": " + KubeJson.quote(expression) + "}}";
  }

  private String webhook(String path) {
    return "{\"webhook\": {\"url\": \"" + webhook.url(path) + "\"}}";
  }

  // CompositeController finalize

  /** Finalized once the hook is told it is finalizing and no child is left. */
  private static final String FINALIZE = """
      {'children': [], 'finalized': finalizing && children['ConfigMap.v1'].size() == 0
                                    && parent.metadata.name == 'p'}""";

  @Test
  void aCelFinalizeHookThatAnswersFinalizedTakesTheFinalizerOff() {
    List<RecordingApi.Action> byCel = finalizeParent(cel(FINALIZE));

    assertThat(byCel).as("the finalize hook's writes").anySatisfy(this::removesTheFinalizer);
    assertThat(byCel).as("the same writes as a webhook answering finalized: true")
        .isEqualTo(finalizeParent(webhook("/finalized")));
  }

  @Test
  void aCelFinalizeHookThatAnswersNotFinalizedLeavesTheFinalizer() {
    List<RecordingApi.Action> writes = finalizeParent(cel(FINALIZE.replace("== 'p'", "== 'q'")));

    assertThat(writes).as("the finalize hook's writes").noneSatisfy(this::removesTheFinalizer);
  }

  private void removesTheFinalizer(RecordingApi.Action action) {
    assertThat(action.verb()).isEqualTo("patch");
    assertThat(action.resource()).isEqualTo("things");
    assertThat(action.name()).isEqualTo("p");
    assertThat(json(action.body())).as("a JSON patch taking the finalizer off").contains(
        json("{\"op\": \"remove\", \"path\": \"/metadata/finalizers/0\"}"));
  }

  /** The writes of one sync of a parent being deleted under the controller's finalizer. */
  private List<RecordingApi.Action> finalizeParent(String finalizeHook) {
    KubeObject parent = KubeObjectBuilder.object(THINGS, NAMESPACE, "p").uid("parent-uid").finalizer(FINALIZER)
        .deleting().field("spec", "{}").build();
    return run(CompositeController.kind(), """
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "uid": "controller-uid"},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": %s, "finalize": %s}}}""".formatted(cel("{'children': []}"), finalizeHook),
        new Held(THINGS, parent, true),
        List.of(THINGS, CONFIG_MAPS));
  }

  // CompositeController customize

  @Test
  void theRelatedObjectsACelCustomizeHookAsksForReachTheCelSyncHook() {
    String customize = """
        {'relatedResources': [{'apiVersion': 'v1', 'resource': 'configmaps', 'names': [parent.spec.source]}]}""";
    String sync = """
        {'children': related['ConfigMap.v1'].map(key, {'apiVersion': 'v1', 'kind': 'ConfigMap',
            'metadata': {'name': parent.metadata.name + '-' + related['ConfigMap.v1'][key].metadata.name},
            'data': related['ConfigMap.v1'][key].data})}""";
    List<RecordingApi.Action> writes = propagate(cel(customize), cel(sync));

    assertThat(writes).as("the copy of the related ConfigMap").anySatisfy(action -> {
      assertThat(action.verb()).isEqualTo("create");
      assertThat(action.name()).isEqualTo("p-source");
      assertThat(json(action.body()).path("data")).isEqualTo(json("{\"color\": \"blue\"}"));
    });
  }

  @Test
  void aCelCustomizeHookThatAsksForOtherNamesRelatesNothing() {
    String customize = """
        {'relatedResources': [{'apiVersion': 'v1', 'resource': 'configmaps', 'names': [parent.spec.source + 'x']}]}""";
    String sync = """
        {'children': [], 'status': {'related': related['ConfigMap.v1'].size()}}""";
    List<RecordingApi.Action> writes = propagate(cel(customize), cel(sync));

    assertThat(writes).as("the status written").anySatisfy(action ->
        assertThat(json(action.body()).at("/1/value/related").asInt(-1)).as(action.body()).isZero());
  }

  /** The writes of one sync of a parent naming a ConfigMap {@code source} to copy. */
  private List<RecordingApi.Action> propagate(String customizeHook, String syncHook) {
    KubeObject parent = KubeObjectBuilder.object(THINGS, NAMESPACE, "p").uid("parent-uid")
        .field("spec", "{\"source\": \"source\"}").build();
    KubeObject source = KubeObjectBuilder.object(CONFIG_MAPS, NAMESPACE, "source").uid("source-uid")
        .field("data", "{\"color\": \"blue\"}").build();
    return run(CompositeController.kind(), """
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "uid": "controller-uid"},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"customize": %s, "sync": %s}}}""".formatted(customizeHook, syncHook),
        new Held(THINGS, parent, true),
        List.of(THINGS, CONFIG_MAPS), new Held(CONFIG_MAPS, source, false));
  }

  // DecoratorController sync

  private static final String DECORATE = """
      {'labels': {'decorated-by': 'cel'},
       'attachments': [{'apiVersion': 'v1', 'kind': 'ConfigMap',
                        'metadata': {'name': object.metadata.name + '-ports'},
                        'data': {'port': string(object.spec.ports[0].port),
                                 'seen': string(attachments['ConfigMap.v1'].size())}}]}""";

  @Test
  void aCelDecoratorSyncHookLabelsTheTargetAndAttaches() {
    List<RecordingApi.Action> byCel = decorate(cel(DECORATE));

    assertThat(byCel).as("the label on the target").anySatisfy(action -> {
      assertThat(action.resource()).isEqualTo("services");
      assertThat(json(action.body()).at("/metadata/labels/decorated-by").asString()).isEqualTo("cel");
    });
    assertThat(byCel).as("the attachment").anySatisfy(action -> {
      assertThat(action.verb()).isEqualTo("create");
      assertThat(action.name()).isEqualTo("s-ports");
      assertThat(json(action.body()).path("data")).isEqualTo(json("{\"port\": \"8080\", \"seen\": \"0\"}"));
    });
    assertThat(byCel).as("the same writes as a webhook answering the same").isEqualTo(decorate(webhook("/decorate")));
  }

  private List<RecordingApi.Action> decorate(String syncHook) {
    KubeObject target = KubeObjectBuilder.object(SERVICES, NAMESPACE, "s").uid("service-uid")
        .field("spec", "{\"ports\": [{\"port\": 8080}]}").build();
    return run(DecoratorController.kind(), """
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "DecoratorController",
         "metadata": {"name": "decorator", "uid": "controller-uid"},
         "spec": {"resources": [{"apiVersion": "v1", "resource": "services"}],
                  "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": %s}}}""".formatted(syncHook),
        new Held(SERVICES, target, true),
        List.of(SERVICES, CONFIG_MAPS));
  }

  // MapController map

  private static final String MAP = """
      {'outputs': [{'apiVersion': 'test.metareactor.dev/v1', 'kind': 'Output',
                    'metadata': {'name': parent.metadata.name + '-' + input.metadata.name},
                    'spec': {'value': input.data.value, 'key': mapKey}}]}""";

  @Test
  void aCelMapHookMakesTheOutputsOfAnInput() {
    List<RecordingApi.Action> byCel = map(cel(MAP));

    assertThat(byCel).as("the output").singleElement().satisfies(action -> {
      assertThat(action.verb()).isEqualTo("create");
      assertThat(action.name()).isEqualTo("mine-in-1");
      assertThat(json(action.body()).path("spec")).isEqualTo(json("{\"value\": \"v1\", \"key\": \"input-uid\"}"));
    });
    assertThat(byCel).as("the same writes as a webhook answering the same").isEqualTo(map(webhook("/map")));
  }

  private List<RecordingApi.Action> map(String mapHook) {
    KubeObject parent = KubeObjectBuilder.object(SCHEDULES, NAMESPACE, "mine").uid("parent-uid")
        .field("spec", "{\"selector\": {\"matchLabels\": {\"team\": \"a\"}}}").build();
    KubeObject input = KubeObjectBuilder.object(CONFIG_MAPS, NAMESPACE, "in-1").uid("input-uid").label("team", "a")
        .field("data", "{\"value\": \"v1\"}").build();
    List<RecordingApi.Action> writes = run(MapController.kind(), """
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "MapController",
         "metadata": {"name": "mapper", "uid": "controller-uid"},
         "spec": {"parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "schedules"},
                  "inputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "outputResources": [{"apiVersion": "test.metareactor.dev/v1", "resource": "outputs"}],
                  "hooks": {"map": %s}}}""".formatted(mapHook),
        new Held(SCHEDULES, parent, true),
        List.of(SCHEDULES, CONFIG_MAPS, OUTPUTS), new Held(CONFIG_MAPS, input, false));
    return writes.stream().filter(action -> action.resource().equals("outputs")).toList();
  }

  // Hosting

  /** An object in the caches and the API; {@code trigger}: the one whose event starts the sync. */
  private record Held(ApiResource resource, KubeObject object, boolean trigger) {}

  /**
   * Hosts the controller {@code controllerObject} of {@code kind}, holds {@code trigger} and {@code others} in the
   * caches and the API, delivers {@code trigger}'s event and returns the writes but Events once a sync has ended.
   */
  private List<RecordingApi.Action> run(ControllerKind kind, String controllerObject, Held trigger,
      List<ApiResource> resources, Held... others) {
    RecordingApi api = new RecordingApi();
    FakeInformers informers = new FakeInformers();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    ControllerContext context = new ControllerContext(EngineCommand.parse(),
        new FixedDiscovery(resources.toArray(ApiResource[]::new)), informers, api,
        new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"), hooks,
        meters, Scheduling.production());
    HostedController controller = kind.factory().create(KubeObject.of((ObjectNode) json(controllerObject)), context);
    try {
      controller.start().subscribe();
      await().atMost(Duration.ofSeconds(30)).until(() -> controller.phase() == HostedController.Phase.RUNNING);
      for (Held held : others) {
        informers.of(held.resource()).put(held.object());
        api.holding(held.resource(), held.object());
      }
      api.holding(trigger.resource(), trigger.object());
      informers.of(trigger.resource()).put(trigger.object()).deliver(added(trigger.object()));
      await().atMost(Duration.ofSeconds(30)).until(() -> meters.find("controller_runtime.reconcile")
          .counters().stream().mapToDouble(Counter::count).sum() >= 1);
      return api.actions().stream().filter(action -> !action.resource().equals("events")).toList();
    } finally {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
  }
}
