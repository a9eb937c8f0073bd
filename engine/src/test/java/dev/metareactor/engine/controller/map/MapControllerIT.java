package dev.metareactor.engine.controller.map;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.ControlPlane;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * MapController on the real control plane: ConfigMaps as inputs, a custom resource ({@code Output}, with the status
 * subresource) as outputs, a parent type made for the test, and map and tombstone hooks served in this JVM. The map
 * hook answers two outputs per input ({@code <parent>-<input>-a} and {@code -b}) carrying the input's
 * {@code data.value}.
 */
@LocalKubernetes
class MapControllerIT {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private LocalCluster cluster;
  private KubernetesClient client;
  private EngineUnderTest engine;
  private HookServer hooks;
  private ParentCrd parents;
  private ParentCrd outputs;
  /** Map calls per input name, and the most calls in flight at once. */
  private final Map<String, AtomicInteger> mapCalls = new ConcurrentHashMap<>();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger mostInFlight = new AtomicInteger();
  /** The outputs each tombstone call was offered, by name; and whether it keeps the {@code -a} outputs. */
  private final List<List<String>> tombstoneCalls = new CopyOnWriteArrayList<>();
  private final AtomicBoolean keepA = new AtomicBoolean(true);
  /** Inputs whose map answer is hostile, each in the way its name says (see {@link #map}). */
  private final Set<String> hostile = ConcurrentHashMap.newKeySet();

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.parents = ParentCrd.create(cluster, "Schedule");
    this.outputs = ParentCrd.create(cluster, "Output");
    this.hooks = HookServer.builder()
        .routeAsync("/map", this::map)
        .route("/tombstone", this::tombstone)
        .start();
    this.engine = EngineUnderTest.start(cluster, "--workers", "8");
  }

  @AfterEach
  void stop() {
    engine.close();
    hooks.close();
  }

  /** Thousands of outputs of the tests' deleted CRDs would slow the garbage collector for every later test. */
  @AfterAll
  static void restartGarbageCollector() {
    ControlPlane.get().restartGarbageCollector();
  }

  @Test
  void mapsEveryInputOfAParentSideBySideAndOnlyItsOwn() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    controller("");
    IntStream.range(0, 100).forEach(i -> input("in-" + i, Map.of("team", label), "v1"));
    IntStream.range(0, 3).forEach(i -> input("other-" + i, Map.of("team", "other-" + label), "v1"));
    parent("mine", label);
    parent("theirs", "other-" + label);

    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 200);
    await().atMost(TIMEOUT).until(() -> outputsOf("theirs").size() == 6);
    assertThat(mostInFlight.get()).as("map calls in flight at once").isGreaterThan(1);
    GenericKubernetesResource output = outputs.in(client).withName("mine-in-7-a").get();
    assertThat(output.getMetadata().getLabels()).containsKey(MapSync.MAP_KEY_LABEL);
    assertThat(output.getMetadata().getAnnotations()).containsEntry(MapSync.INPUT_ANNOTATION,
        "configmaps/" + cluster.namespace() + "/in-7");
    assertThat(output.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(ref -> assertThat(ref.getName()).isEqualTo("mine"));
    await().atMost(TIMEOUT).until(() -> count(status("mine"), "inputs", "configmaps", "total") == 100
        && count(status("mine"), "outputs", outputs.plural(), "total") == 200);
    assertThat(count(status("theirs"), "inputs", "configmaps", "total")).isEqualTo(3);
  }

  @Test
  void anEditedInputIsMappedAloneAndStatusCountsReadyOutputsOnceTheyChange() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    String controller = controller("");
    IntStream.range(0, 10).forEach(i -> input("in-" + i, Map.of("team", label), "v1"));
    parent("mine", label);
    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 20);
    await().pollDelay(Duration.ofSeconds(1)).atMost(TIMEOUT).until(() -> true);
    mapCalls.clear();

    client.configMaps().withName("in-3").edit(cm -> new ConfigMapBuilder(cm).addToData("value", "v2").build());

    await().atMost(TIMEOUT).until(() -> "v2".equals(valueOf(outputs.in(client).withName("mine-in-3-b").get())));
    await().pollDelay(Duration.ofSeconds(1)).atMost(TIMEOUT).until(() -> true);
    assertThat(mapCalls.keySet()).containsExactly("in-3");
    // The parent's ring of recent syncs (issue 33) files the sync under the parent, caused by the input's change.
    String[] inputChanged = {"\"cause\":\"map_input\"", "\"kind\":\"ConfigMap\"", "\"name\":\"in-3\"",
        "\"change\":\"updated\""};
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(
        engine.keptCauses("mapcontroller", controller, cluster.namespace(), "mine"))
        .anySatisfy(cause -> assertThat(cause.toString()).contains(inputChanged)));

    mapCalls.clear();
    // A merge patch without resourceVersion, as kubectl patch: the engine writes the parent's status meanwhile.
    parents.in(client).withName("mine").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\": {\"note\": \"edited\"}}");
    await().atMost(TIMEOUT).until(() -> mapCalls.size() == 10);

    double statusWrites = statusWrites();
    for (String name : List.of("mine-in-1-a", "mine-in-2-a", "mine-in-5-b")) {
      outputs.in(client).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}");
    }
    // The engine counts a write when its answer arrives, which may be after the test sees the status it wrote.
    await().atMost(TIMEOUT).until(() -> count(status("mine"), "outputs", outputs.plural(), "ready") == 3
        && statusWrites() > statusWrites);
    await().pollDelay(Duration.ofSeconds(1)).atMost(TIMEOUT).until(() -> true);
    assertThat(statusWrites() - statusWrites).as("status writes for three output changes").isBetween(1.0, 3.0);
  }

  @Test
  void detachedOutputsGoToTheTombstoneHookWhichKeepsSomeUntilItLetsThemGo() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    controller("""
          resyncPeriodSeconds: 1
          hooks:
            map:
              webhook:
                url: %s
            tombstone:
              webhook:
                url: %s
        """.formatted(hooks.url("/map"), hooks.url("/tombstone")));
    input("deleted", Map.of("team", label), "v1");
    input("unlabelled", Map.of("team", label), "v1");
    input("kept", Map.of("team", label), "v1");
    parent("mine", label);
    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 6);

    client.configMaps().withName("deleted").delete();
    client.configMaps().withName("unlabelled").edit(cm -> new ConfigMapBuilder(cm).editMetadata()
        .removeFromLabels("team").endMetadata().build());

    await().atMost(TIMEOUT).until(() -> outputsOf("mine").stream().map(o -> o.getMetadata().getName())
        .collect(java.util.stream.Collectors.toSet())
        .equals(Set.of("mine-deleted-a", "mine-unlabelled-a", "mine-kept-a", "mine-kept-b")));
    assertThat(tombstoneCalls).anySatisfy(call -> assertThat(call).containsExactlyInAnyOrder("mine-deleted-a",
        "mine-deleted-b"));

    keepA.set(false);
    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 2);
    assertThat(names(outputsOf("mine"))).containsExactlyInAnyOrder("mine-kept-a", "mine-kept-b");
  }

  /**
   * The map and tombstone hooks in CEL, no webhook: {@link #map}'s outputs, and a tombstone hook that keeps a
   * removed input's {@code -a} outputs until the parent's {@code spec.letGo} says otherwise; the rest goes as a
   * webhook's answer would have it.
   */
  @Test
  void celMapAndTombstoneHooksKeepWhatTheTombstoneAnswerListsUntilItLetsThemGo() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    controller("""
          resyncPeriodSeconds: 1
          hooks:
            map:
              cel:
                expression: |
                  {'outputs': ['-a', '-b'].map(s, {'apiVersion': '%s', 'kind': '%s',
                     'metadata': {'name': parent.metadata.name + '-' + input.metadata.name + s},
                     'spec': {'value': input.data.value}})}
            tombstone:
              cel:
                expression: |
                  {'outputs': has(parent.spec.letGo) ? [] : outputs.map(type, outputs[type].map(name,
                     outputs[type][name]).filter(o, o.metadata.name.endsWith('-a'))).flatten()}
        """.formatted(outputs.apiVersion(), outputs.kind()));
    input("deleted", Map.of("team", label), "v1");
    input("kept", Map.of("team", label), "v1");
    parent("mine", label);
    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 4);
    assertThat(valueOf(outputs.in(client).withName("mine-deleted-b").get())).isEqualTo("v1");

    client.configMaps().withName("deleted").delete();
    await().atMost(TIMEOUT).until(() -> Set.copyOf(names(outputsOf("mine")))
        .equals(Set.of("mine-deleted-a", "mine-kept-a", "mine-kept-b")));

    parents.in(client).withName("mine").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\": {\"letGo\": true}}");
    await().atMost(TIMEOUT).until(() -> Set.copyOf(names(outputsOf("mine"))).equals(Set.of("mine-kept-a",
        "mine-kept-b")));
    assertThat(mapCalls).as("webhook map calls").isEmpty();
    assertThat(tombstoneCalls).as("webhook tombstone calls").isEmpty();
  }

  @Test
  void withoutATombstoneHookDetachedOutputsGoAtOnceAndARecreatedInputGetsFreshOnes() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    controller("");
    input("in-1", Map.of("team", label), "v1");
    parent("mine", label);
    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 2);
    String firstKey = outputs.in(client).withName("mine-in-1-a").get().getMetadata().getLabels()
        .get(MapSync.MAP_KEY_LABEL);

    client.configMaps().withName("in-1").delete();
    await().atMost(TIMEOUT).until(() -> outputsOf("mine").isEmpty());
    input("in-1", Map.of("team", label), "v2");

    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 2
        && "v2".equals(valueOf(outputs.in(client).withName("mine-in-1-a").get())));
    assertThat(outputs.in(client).withName("mine-in-1-a").get().getMetadata().getLabels().get(MapSync.MAP_KEY_LABEL))
        .isNotEqualTo(firstKey);
    assertThat(tombstoneCalls).isEmpty();
  }

  @Test
  void anInputTheParentControlsIsNeverMappedAndHostileAnswersAreReportedForTheirInputAlone() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    controller("""
          hooks:
            map:
              webhook:
                url: %s
                timeout: 2s
        """.formatted(hooks.url("/map")));
    GenericKubernetesResource parent = parent("mine", label);
    // Before the inputs exist: every map answer for them is hostile (see map()).
    Map<String, String> problems = Map.of(
        "undeclared", "Secret v1 is not declared in spec.outputResources",
        "nulls", "outputs[0] must be an object",
        "elsewhere", "is in namespace kube-system but its parent is in " + cluster.namespace(),
        "twins", "are both",
        "failing", "500",
        "silent", "");
    hostile.addAll(problems.keySet());
    input("fine", Map.of("team", label), "v1");
    problems.keySet().forEach(name -> input(name, Map.of("team", label), "v1"));
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("own").addToLabels("team", label)
        .addToOwnerReferences(new OwnerReferenceBuilder().withApiVersion(parents.apiVersion())
            .withKind(parents.kind()).withName("mine").withUid(parent.getMetadata().getUid()).withController(true)
            .build())
        .endMetadata().addToData("value", "v1").build()).create();

    await().atMost(TIMEOUT).until(() -> outputsOf("mine").size() == 2);
    problems.forEach((name, problem) -> await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(),
        "mine", "SyncError", "input configmaps/" + cluster.namespace() + "/" + name + ": ")
        && engine.eventsAbout(cluster.namespace(), "mine").stream().anyMatch(event ->
            event.getMessage().contains("/" + name + ": ") && event.getMessage().contains(problem))));
    assertThat(names(outputsOf("mine"))).containsExactlyInAnyOrder("mine-fine-a", "mine-fine-b");
    assertThat(mapCalls).doesNotContainKey("own");
  }

  @Test
  void aConvergedMapControllerMakesNoApiRequestsWhileItResyncsEverySecond() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    controller("  resyncPeriodSeconds: 1\n");
    IntStream.range(0, 10).forEach(i -> input("in-" + i, Map.of("team", label), "v1"));
    IntStream.range(0, 100).forEach(i -> parent("p-" + i, label));
    await().atMost(Duration.ofMinutes(3)).until(() -> outputs.in(client).list().getItems().size() == 2_000
        && parents.in(client).list().getItems().stream()
            .allMatch(parent -> count(statusOf(parent), "outputs", outputs.plural(), "total") == 20));
    await().pollDelay(Duration.ofSeconds(3)).atMost(TIMEOUT).until(() -> true);
    int calls = totalMapCalls();
    double requests = engine.apiRequests();

    // At least one whole resync of the 100 parents (1,000 map calls) however long a busy machine takes for it.
    await("a resync of every parent").atMost(TIMEOUT).until(() -> totalMapCalls() - calls >= 1_000);

    assertThat(engine.apiRequests() - requests).as("API requests while converged").isZero();
  }

  @Test
  void aDeletedParentsOutputsGoToTheGarbageCollectorAndADeletedMapControllerIsNoLongerHosted() {
    String label = "team-" + UUID.randomUUID().toString().substring(0, 6);
    String name = controller("");
    input("in-1", Map.of("team", label), "v1");
    parent("gone", label);
    parent("stays", label);
    await().atMost(TIMEOUT).until(() -> outputsOf("gone").size() == 2 && outputsOf("stays").size() == 2);
    assertThat(parents.in(client).withName("stays").get().getMetadata().getFinalizers()).isNullOrEmpty();

    parents.in(client).withName("gone").delete();
    await().atMost(Duration.ofMinutes(2)).until(() -> outputsOf("gone").isEmpty());

    engine.deleteController("MapController", name);
    await().atMost(TIMEOUT).until(() -> engine.engine().host(MapController.KIND).orElseThrow().phase(name).isEmpty());
    int calls = totalMapCalls();
    client.configMaps().withName("in-1").edit(cm -> new ConfigMapBuilder(cm).addToData("value", "v2").build());
    await().pollDelay(Duration.ofSeconds(2)).atMost(TIMEOUT).until(() -> true);
    assertThat(totalMapCalls()).as("map calls after the MapController was deleted").isEqualTo(calls);
    assertThat(parents.in(client).withName("stays").get().getMetadata().getFinalizers()).isNullOrEmpty();
    assertThat(valueOf(outputs.in(client).withName("stays-in-1-a").get())).isEqualTo("v1");
  }

  // ---- the fixture

  private Mono<JsonNode> map(JsonNode request) {
    String input = request.path("input").path("metadata").path("name").asString();
    mapCalls.computeIfAbsent(input, name -> new AtomicInteger()).incrementAndGet();
    int now = inFlight.incrementAndGet();
    mostInFlight.accumulateAndGet(now, Math::max);
    String value = request.path("input").path("data").path("value").asString("");
    String prefix = request.path("parent").path("metadata").path("name").asString() + "-" + input;
    String mode = hostile.contains(input) ? input : "fine";
    ObjectNode answer = NODES.objectNode();
    var list = answer.putArray("outputs");
    for (String suffix : List.of("-a", "-b")) {
      if (mode.equals("nulls")) {
        list.addNull();
        continue;
      }
      ObjectNode output = list.addObject();
      output.put("apiVersion", mode.equals("undeclared") ? "v1" : outputs.apiVersion())
          .put("kind", mode.equals("undeclared") ? "Secret" : outputs.kind());
      ObjectNode metadata = output.putObject("metadata").put("name", prefix + (mode.equals("twins") ? "" : suffix));
      if (mode.equals("elsewhere")) {
        metadata.put("namespace", "kube-system");
      }
      output.putObject("spec").put("value", value);
    }
    Mono<JsonNode> answered = switch (mode) {
      case "failing" -> Mono.error(new IllegalStateException("the map hook failed"));
      case "silent" -> Mono.never();
      default -> Mono.delay(Duration.ofMillis(20)).thenReturn(answer);
    };
    return answered.doFinally(signal -> inFlight.decrementAndGet());
  }

  private JsonNode tombstone(JsonNode request) {
    ObjectNode answer = NODES.objectNode();
    var kept = answer.putArray("outputs");
    List<String> offered = new java.util.ArrayList<>();
    request.path("outputs").properties().forEach(group -> group.getValue().properties().forEach(output -> {
      offered.add(output.getValue().path("metadata").path("name").asString());
      if (keepA.get() && output.getValue().path("metadata").path("name").asString().endsWith("-a")) {
        kept.add(output.getValue());
      }
    }));
    tombstoneCalls.add(offered);
    return answer;
  }

  /** Creates the MapController; returns its name. */
  private String controller(String extraSpec) {
    String hooksSpec = extraSpec.contains("hooks:") ? "" : """
          hooks:
            map:
              webhook:
                url: %s
        """.formatted(hooks.url("/map"));
    String name = "mc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: MapController
        metadata:
          name: %s
        spec:
          parentResource:
            apiVersion: %s
            resource: %s
          inputResources:
          - apiVersion: v1
            resource: configmaps
          outputResources:
          - apiVersion: %s
            resource: %s
            updateStrategy:
              method: InPlace
        """.formatted(name, parents.apiVersion(), parents.plural(), outputs.apiVersion(), outputs.plural())
        + hooksSpec + extraSpec);
    return name;
  }

  private void input(String name, Map<String, String> labels, String value) {
    ConfigMap input = new ConfigMapBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata()
        .addToData("value", value).build();
    client.configMaps().resource(input).create();
  }

  private GenericKubernetesResource parent(String name, String team) {
    return parents.in(client).resource(parents.object(cluster.namespace(), name,
        Map.of("selector", Map.of("matchLabels", Map.of("team", team))))).create();
  }

  private List<GenericKubernetesResource> outputsOf(String parent) {
    return outputs.in(client).list().getItems().stream()
        .filter(o -> o.getMetadata().getOwnerReferences().stream().anyMatch(ref -> ref.getName().equals(parent)))
        .filter(o -> o.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private static List<String> names(List<GenericKubernetesResource> objects) {
    return objects.stream().map(o -> o.getMetadata().getName()).toList();
  }

  @SuppressWarnings("unchecked")
  private static String valueOf(GenericKubernetesResource output) {
    Object spec = output == null ? null : output.getAdditionalProperties().get("spec");
    return spec instanceof Map<?, ?> map ? (String) ((Map<String, Object>) map).get("value") : null;
  }

  private Map<String, Object> status(String parent) {
    return statusOf(parents.in(client).withName(parent).get());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> statusOf(GenericKubernetesResource parent) {
    Object status = parent.getAdditionalProperties().get("status");
    return status instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
  }

  @SuppressWarnings("unchecked")
  private static int count(Map<String, Object> status, String part, String resource, String what) {
    Object counts = status.get(part) instanceof Map<?, ?> map ? map.get(resource) : null;
    Object value = counts instanceof Map<?, ?> map ? ((Map<String, Object>) map).get(what) : null;
    return value instanceof Number number ? number.intValue() : -1;
  }

  private int totalMapCalls() {
    return mapCalls.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  private double statusWrites() {
    return engine.apiRequests(counter -> "patch-status".equals(counter.getId().getTag("verb"))
        || "patch".equals(counter.getId().getTag("verb"))
        && parents.plural().equals(counter.getId().getTag("resource")));
  }
}
