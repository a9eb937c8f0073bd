package dev.metareactor.engine.controller.map;

import static dev.metareactor.engine.controller.map.MapFixture.NAMESPACE;
import static dev.metareactor.engine.controller.map.MapFixture.OUTPUTS;
import static dev.metareactor.engine.controller.map.MapFixture.cached;
import static dev.metareactor.engine.controller.map.MapFixture.keyOf;
import static dev.metareactor.engine.controller.map.MapFixture.parentSelecting;
import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.ObjectEvents.deleted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * A MapController's sync of one input of one parent in the middle tier ({@link MapFixture}): the real
 * {@link ObjectSync} and {@link MapSync}, children manager and finalizers over in-memory informer caches, an API that
 * records every request, and the map and tombstone hooks as lambdas. No cluster; milliseconds.
 */
class MapSyncTest {

  private static final String OUTPUT_GROUP = "Output.test.metareactor.dev/v1";

  /** The requests each hook got, as sent (parsed back from their JSON). */
  private final List<JsonNode> mapRequests = new CopyOnWriteArrayList<>();
  private final List<JsonNode> tombstoneRequests = new CopyOnWriteArrayList<>();
  /** The map hook's whole answer; {@code null}: outputs {@code <input>-a} and {@code <input>-b}. */
  private final AtomicReference<String> mapAnswer = new AtomicReference<>();
  /** The names of the outputs the tombstone hook keeps; {@code null}: it answers {@code {}}. */
  private final AtomicReference<List<String>> kept = new AtomicReference<>(List.of());
  /** The parent {@code p}, selecting {@code team=a}, and its input {@code in}, as each fixture caches them. */
  private final KubeObject parent = parentSelecting(NAMESPACE, "p", "a").build();
  private final KubeObject input = MapFixture.input(NAMESPACE, "in", "a").field("data", "{\"value\": \"v1\"}").build();
  private final MapFixture fixture = withParentAndInput(new MapFixture(this::tombstone));

  /** Caches the parent and its input in {@code wired}. */
  private MapFixture withParentAndInput(MapFixture wired) {
    cached(wired.parents, parent);
    cached(wired.configMaps, input);
    return wired;
  }

  private Mono<JsonNode> map(JsonNode request, HookCaller.RootObject root) {
    JsonNode sent = asSent(request);
    mapRequests.add(sent);
    String name = sent.path("input").path("metadata").path("name").asString();
    String value = sent.path("input").path("data").path("value").asString();
    String answer = mapAnswer.get() != null ? mapAnswer.get()
        : "{\"outputs\": [" + output(name + "-a", value) + ", " + output(name + "-b", value) + "]}";
    return Mono.just(KubeJson.mapper().readTree(answer));
  }

  private Mono<JsonNode> tombstone(JsonNode request, HookCaller.RootObject root) {
    tombstoneRequests.add(asSent(request));
    if (kept.get() == null) {
      return Mono.just(KubeJson.mapper().readTree("{}"));
    }
    List<String> outputs = kept.get().stream().map(name -> output(name, "kept")).toList();
    return Mono.just(KubeJson.mapper().readTree("{\"outputs\": [" + String.join(", ", outputs) + "]}"));
  }

  /** The request as the hook reads it: the observed objects in it are raw JSON until it is written. */
  private static JsonNode asSent(JsonNode request) {
    return KubeJson.mapper().readTree(KubeJson.mapper().writeValueAsString(request));
  }

  /** An output as a hook asks for it. */
  private static String output(String name, String value) {
    return """
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Output", "metadata": {"name": "%s"},
         "spec": {"value": "%s"}}""".formatted(name, value);
  }

  /** Syncs the input {@code in} of the parent {@code p}. */
  private void run(MapFixture wired) {
    wired.objectSync(this::map).sync(keyOf(parent, input)).block(Duration.ofSeconds(5));
  }

  private void run() {
    run(fixture);
  }

  /**
   * Syncs the input once and caches what that created as the informer would bring it; then forgets the requests
   * made, the hook calls and the status changes, so that a test speaks of the sync it is about.
   */
  private void mappedOnce(MapFixture wired) {
    run(wired);
    wired.api.actions().stream().filter(action -> action.verb().equals("create"))
        .forEach(action -> wired.outputs.put(wired.api.object(OUTPUTS, action.namespace(), action.name())
            .orElseThrow()));
    wired.api.clearActions();
    wired.statusChanged.clear();
    mapRequests.clear();
  }

  private static List<String> requests(MapFixture wired) {
    return wired.api.actions().stream().map(RecordingApi.Action::toString).toList();
  }

  private static List<String> propertyNames(JsonNode node) {
    return List.copyOf(node.propertyNames());
  }

  @Test
  void anAttachedInputIsMappedWithItsParentMapKeyInputAndOutputsGroupedByType() {
    mappedOnce(fixture);

    run();

    assertThat(mapRequests).hasSize(1);
    JsonNode request = mapRequests.get(0);
    assertThat(propertyNames(request)).as("no related objects, no finalizing")
        .containsExactlyInAnyOrder("controller", "parent", "mapKey", "input", "outputs");
    assertThat(request.path("controller").path("metadata").path("name").asString()).isEqualTo("snapshots");
    assertThat(request.path("parent").path("metadata").path("uid").asString()).isEqualTo(parent.uid());
    assertThat(request.path("mapKey").asString()).isEqualTo(input.uid());
    assertThat(request.path("input").path("data").path("value").asString()).isEqualTo("v1");
    assertThat(propertyNames(request.path("outputs"))).containsExactly(OUTPUT_GROUP);
    assertThat(propertyNames(request.path("outputs").path(OUTPUT_GROUP))).containsExactlyInAnyOrder("in-a", "in-b");
  }

  @Test
  void desiredOutputsAreCreatedWithTheMapKeyLabelTheInputAnnotationAndAControllerRef() {
    run();

    assertThat(requests(fixture)).containsExactlyInAnyOrder("create outputs team/in-a", "create outputs team/in-b");
    JsonNode created = KubeJson.mapper().readTree(fixture.api.actions().get(0).body());
    JsonNode metadata = created.path("metadata");
    assertThat(metadata.path("labels").path(MapSync.MAP_KEY_LABEL).asString()).isEqualTo(input.uid());
    assertThat(metadata.path("annotations").path(MapSync.INPUT_ANNOTATION).asString()).isEqualTo("configmaps/team/in");
    assertThat(metadata.path("ownerReferences")).singleElement().satisfies(ref -> {
      assertThat(ref.path("uid").asString()).isEqualTo(parent.uid());
      assertThat(ref.path("controller").asBoolean()).isTrue();
    });
    assertThat(created.path("spec").path("value").asString()).isEqualTo("v1");
  }

  @Test
  void aConvergedInputMakesNoApiRequest() {
    mappedOnce(fixture);

    run();

    assertThat(mapRequests).as("the map hook is still asked").hasSize(1);
    assertThat(requests(fixture)).as("a steady-state sync reads caches only").isEmpty();
  }

  @Test
  void theOutputsOfAGoneInputGoToTheTombstoneHookAndOnlyThoseItDoesNotListAreDeleted() {
    mappedOnce(fixture);
    fixture.configMaps.deliver(deleted(fixture.configMaps.get(NAMESPACE, "in").orElseThrow()));
    kept.set(List.of("in-a"));

    run();

    assertThat(mapRequests).isEmpty();
    assertThat(tombstoneRequests).hasSize(1);
    JsonNode request = tombstoneRequests.get(0);
    assertThat(propertyNames(request)).containsExactlyInAnyOrder("controller", "parent", "mapKey", "outputs");
    assertThat(request.path("mapKey").asString()).isEqualTo(input.uid());
    assertThat(propertyNames(request.path("outputs").path(OUTPUT_GROUP))).containsExactlyInAnyOrder("in-a", "in-b");
    assertThat(requests(fixture)).containsExactly("delete outputs team/in-b");
  }

  @Test
  void withoutATombstoneHookTheOutputsOfAnInputNoLongerSelectedAreDeletedWithoutAHookCall() {
    MapFixture withoutTombstone = withParentAndInput(new MapFixture());
    mappedOnce(withoutTombstone);
    KubeObject before = withoutTombstone.configMaps.get(NAMESPACE, "in").orElseThrow();
    withoutTombstone.configMaps.put(nextVersionOf(before).label("team", "b").build());

    run(withoutTombstone);

    assertThat(mapRequests).isEmpty();
    assertThat(requests(withoutTombstone))
        .containsExactlyInAnyOrder("delete outputs team/in-a", "delete outputs team/in-b");
  }

  @Test
  void aMapAnswerWithoutOutputsDeletesTheInputsOutputsAsUpstreamWouldWithAMissingChildrenWarning() {
    mappedOnce(fixture);
    mapAnswer.set("{\"resyncAfterSeconds\": 60}");

    run();

    assertThat(requests(fixture)).containsExactlyInAnyOrder("delete outputs team/in-a", "delete outputs team/in-b");
    assertThat(fixture.events).containsExactly("p: Warning MissingChildren input configmaps/team/in: the sync"
        + " answer has no \"outputs\" (absent or null, not []): deleting all 2 observed, as Metacontroller does;"
        + " annotate the controller metareactor.dev/delete-guard=true to refuse such answers");
  }

  @Test
  void underTheDeleteGuardAMapAnswerWithoutOutputsOrDroppingMostIsRefusedWhole() {
    MapFixture guarded = withParentAndInput(new MapFixture(this::tombstone, true));
    mappedOnce(guarded);

    mapAnswer.set("{\"outputs\": null}");
    assertThatThrownBy(() -> run(guarded)).isInstanceOf(HookResponseException.class)
        .hasMessageContaining("the answer has no \"outputs\" (absent or null, not []), which would delete all 2");
    mapAnswer.set("{\"outputs\": []}");
    assertThatThrownBy(() -> run(guarded))
        .hasMessageContaining("would delete 2 of the 2 observed outputs at once, more than half");
    mapAnswer.set("{\"outputs\": [" + output("in-a", "v1") + "]}");
    run(guarded);

    assertThat(requests(guarded)).as("half at once is allowed").containsExactly("delete outputs team/in-b");
    assertThat(guarded.events).isEmpty();
  }

  @Test
  void aTombstoneAnswerWithoutOutputsKeepsNothingEvenUnderTheDeleteGuard() {
    MapFixture guarded = withParentAndInput(new MapFixture(this::tombstone, true));
    mappedOnce(guarded);
    guarded.configMaps.deliver(deleted(guarded.configMaps.get(NAMESPACE, "in").orElseThrow()));
    kept.set(null);

    run(guarded);

    assertThat(tombstoneRequests).hasSize(1);
    assertThat(requests(guarded)).as("letting detached outputs go is what a tombstone hook is for")
        .containsExactlyInAnyOrder("delete outputs team/in-a", "delete outputs team/in-b");
    assertThat(guarded.events).isEmpty();
  }

  @Test
  void anInputControlledByTheParentIsNotSelected() {
    KubeObject cachedParent = fixture.parents.get(NAMESPACE, "p").orElseThrow();
    KubeObject before = fixture.configMaps.get(NAMESPACE, "in").orElseThrow();
    fixture.configMaps.put(nextVersionOf(before).controlledBy(cachedParent).build());

    run();

    assertThat(fixture.kind.keysOf(cachedParent)).isEmpty();
    assertThat(mapRequests).isEmpty();
    assertThat(tombstoneRequests).as("it has no outputs to offer").isEmpty();
    assertThat(requests(fixture)).isEmpty();
  }

  /** The second output of a hostile answer (the first is fine), and what the failure must say. */
  static Stream<Arguments> hostileOutputs() {
    return Stream.of(
        Arguments.of("undeclared type", """
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "in-c"}}""",
            "outputs: Secret v1 is not declared in spec.outputResources of MapController snapshots"),
        Arguments.of("other namespace", """
            {"apiVersion": "test.metareactor.dev/v1", "kind": "Output",
             "metadata": {"name": "in-c", "namespace": "elsewhere"}}""",
            "Output in-c is in namespace elsewhere but its parent is in team"),
        Arguments.of("duplicate names", output("in-new", "again"),
            "outputs[0] and outputs[1] are both Output team/in-new"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileOutputs")
  void aHostileAnswerFailsTheSyncNamingTheProblemAndWritesNothing(String problem, String hostile, String message) {
    mappedOnce(fixture);
    // A fine new output first: nothing of the answer may be written, not even what comes before the problem.
    mapAnswer.set("{\"outputs\": [" + output("in-new", "v1") + ", " + hostile + "]}");

    assertThatThrownBy(this::run).hasMessageContaining(message);

    assertThat(requests(fixture)).isEmpty();
  }

  @Test
  void theParentsStatusIsNotWrittenBySyncsButTheStatusWriterIsTold() {
    run();

    assertThat(requests(fixture)).as("only the outputs are written")
        .allSatisfy(request -> assertThat(request).startsWith("create outputs "));
    assertThat(fixture.statusChanged).containsExactly(new ParentKey(NAMESPACE, "p"));
  }
}
