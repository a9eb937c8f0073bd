package dev.metareactor.engine.controller.map;

import static dev.metareactor.engine.controller.map.MapFixture.NAMESPACE;
import static dev.metareactor.engine.controller.map.MapFixture.cached;
import static dev.metareactor.engine.controller.map.MapFixture.input;
import static dev.metareactor.engine.controller.map.MapFixture.keyOf;
import static dev.metareactor.engine.controller.map.MapFixture.output;
import static dev.metareactor.engine.controller.map.MapFixture.parent;
import static dev.metareactor.engine.controller.map.MapFixture.parentSelecting;
import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.deleted;
import static dev.metareactor.engine.testing.ObjectEvents.resync;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link MapRouter} in the unit tier: informer events handed to it directly, the caches in memory
 * ({@link MapFixture}), its keys of parents' inputs taken from the real {@link MapSync}, and what it enqueues, says
 * changed and forgets recorded in lists. No cluster, no queue, no sync; milliseconds.
 */
class MapRouterTest {

  private final MapFixture fixture = new MapFixture();
  private final List<MapKey> enqueued = new ArrayList<>();
  /** The cause of each key in {@link #enqueued}, in the same order. */
  private final List<Trigger> triggers = new ArrayList<>();
  private final List<ParentKey> statusChanged = new ArrayList<>();
  private final List<ParentKey> gone = new ArrayList<>();
  private final MapRouter router = fixture.router((key, trigger) -> {
      enqueued.add(key);
      triggers.add(trigger);
    }, statusChanged::add, gone::add);

  /** Caches a parent and tells the router it was added; then forgets what that did. */
  private KubeObject parentAdded(KubeObject parent) {
    cached(fixture.parents, parent);
    router.onParentEvent(added(parent));
    clearRecords();
    return parent;
  }

  private KubeObject inputCached(KubeObject input) {
    return cached(fixture.configMaps, input);
  }

  private void clearRecords() {
    enqueued.clear();
    triggers.clear();
    statusChanged.clear();
    gone.clear();
  }

  private static ParentKey parentKey(String name) {
    return new ParentKey(NAMESPACE, name);
  }

  /** The keys enqueued as their records show them (equality of keys ignores where the input is). */
  private List<String> enqueuedAsShown() {
    return enqueued.stream().map(MapRouterTest::shown).toList();
  }

  private static String shown(MapKey key) {
    return key.name() + " " + key.mapKey() + " " + key.input();
  }

  /**
   * Asserts that the router forgot the parent {@code name} (and enqueued nothing for it) and that an input labelled
   * {@code team=<team>}, which its selector matched, is no longer routed to it.
   */
  private void assertGoneAndNoLongerRoutingInputs(String name, String team) {
    assertThat(gone).containsExactly(parentKey(name));
    assertThat(enqueued).isEmpty();
    clearRecords();

    router.onInputEvent(MapFixture.CONFIG_MAPS, added(input(NAMESPACE, "in", team).build()));
    assertThat(enqueued).isEmpty();
  }

  // ---- parent events

  @Test
  void aParentEventEnqueuesItsSelectedInputsAndItsDetachedOutputGroups() {
    KubeObject parent = cached(fixture.parents, parentSelecting(NAMESPACE, "p", "a").build());
    KubeObject first = inputCached(input(NAMESPACE, "first", "a").build());
    KubeObject second = inputCached(input(NAMESPACE, "second", "a").build());
    inputCached(input(NAMESPACE, "unselected", "b").build());
    inputCached(input("elsewhere", "other-namespace", "a").build());
    // The outputs of an input that is gone: the parent's sync of that key offers them to the tombstone hook.
    KubeObject goneInput = input(NAMESPACE, "gone", "a").build();
    cached(fixture.outputs, output(parent, goneInput, "gone-a").build());
    cached(fixture.outputs, output(parent, goneInput, "gone-b").build());

    router.onParentEvent(added(parent));

    assertThat(enqueuedAsShown()).containsExactlyInAnyOrder(shown(keyOf(parent, first)),
        shown(keyOf(parent, second)), shown(keyOf(parent, goneInput)));
    assertThat(statusChanged).containsExactly(parentKey("p"));
    assertThat(gone).isEmpty();
  }

  @Test
  void aParentUpdateThatChangedOnlyItsStatusIsIgnored() {
    KubeObject before = parentAdded(parent("p").build());
    inputCached(input(NAMESPACE, "in", "a").build());

    // The engine's own status write comes back as such an update; it must not map every input again.
    router.onParentEvent(updated(before, nextVersionOf(before).field("status", "{\"inputs\": {}}").build()));

    assertThat(enqueued).isEmpty();
    assertThat(statusChanged).isEmpty();
  }

  @Test
  void aParentWithoutGenerationIsNotTakenForAStatusOnlyChange() {
    KubeObject before = parentAdded(parent("p").generation(0).build());
    KubeObject input = inputCached(input(NAMESPACE, "in", "a").build());

    // Without metadata.generation nothing tells a spec edit from a status write.
    router.onParentEvent(updated(before, nextVersionOf(before).field("status", "{\"inputs\": {}}").build()));

    assertThat(enqueued).containsExactly(keyOf(before, input));
    assertThat(statusChanged).containsExactly(parentKey("p"));
  }

  @Test
  void aDeletedParentIsGoneAndItsSelectorNoLongerRoutesInputs() {
    KubeObject parent = parentAdded(parentSelecting(NAMESPACE, "p", "a").build());

    router.onParentEvent(deleted(parent));

    assertGoneAndNoLongerRoutingInputs("p", "a");
  }

  @Test
  void aParentNoLongerSelectedIsGoneAndItsSelectorNoLongerRoutesInputs() {
    KubeObject before = parentAdded(parentSelecting(NAMESPACE, "p", "a").build());
    KubeObject after = cached(fixture.parents, nextVersionOf(before).label("managed", "no").build());

    router.onParentEvent(updated(before, after));

    assertGoneAndNoLongerRoutingInputs("p", "a");
  }

  // ---- input events

  @Test
  void anInputEventEnqueuesAMapKeyForEachParentWhoseSelectorMatchesInItsNamespace() {
    KubeObject first = parentAdded(parentSelecting(NAMESPACE, "first", "a").build());
    KubeObject second = parentAdded(parentSelecting(NAMESPACE, "second", "a").build());
    parentAdded(parentSelecting(NAMESPACE, "other-team", "b").build());
    parentAdded(parentSelecting("elsewhere", "other-namespace", "a").build());
    KubeObject input = input(NAMESPACE, "in", "a").build();

    router.onInputEvent(MapFixture.CONFIG_MAPS, added(input));

    assertThat(enqueuedAsShown()).containsExactlyInAnyOrder(shown(keyOf(first, input)), shown(keyOf(second, input)));
    assertThat(triggers).containsOnly(
        Trigger.about(Trigger.Cause.MAP_INPUT, Trigger.Change.CREATED, "ConfigMap", NAMESPACE, "in"));
    assertThat(statusChanged).containsExactlyInAnyOrder(parentKey("first"), parentKey("second"));
  }

  @Test
  void anInputWhoseLabelsChangedEnqueuesForTheParentsOfItsOldLabelsToo() {
    KubeObject left = parentAdded(parentSelecting(NAMESPACE, "left", "a").build());
    KubeObject joined = parentAdded(parentSelecting(NAMESPACE, "joined", "b").build());
    KubeObject before = input(NAMESPACE, "in", "a").build();
    KubeObject after = nextVersionOf(before).label("team", "b").build();

    // The parent it left must offer its outputs to the tombstone hook.
    router.onInputEvent(MapFixture.CONFIG_MAPS, updated(before, after));

    assertThat(enqueued).containsExactlyInAnyOrder(keyOf(left, after), keyOf(joined, after));
  }

  @Test
  void aClusterScopedInputEnqueuesTheNamespacedParentsWhoseSelectorMatches() {
    KubeObject parent = parentAdded(parentSelecting(NAMESPACE, "p", "a").build());
    KubeObject elsewhere = parentAdded(parentSelecting("elsewhere", "q", "a").build());
    parentAdded(parentSelecting(NAMESPACE, "other-team", "b").build());
    KubeObject node = object(MapFixture.NODES, "", "node").label("team", "a").build();

    // A namespaced parent selects cluster-scoped inputs whatever its namespace, as its sync does.
    router.onInputEvent(MapFixture.NODES, added(node));

    assertThat(enqueuedAsShown()).containsExactlyInAnyOrder(shown(keyOf(parent, MapFixture.NODES, node)),
        shown(keyOf(elsewhere, MapFixture.NODES, node)));
  }

  @Test
  void inputResyncsAreIgnored() {
    parentAdded(parentSelecting(NAMESPACE, "p", "a").build());

    router.onInputEvent(MapFixture.CONFIG_MAPS, resync(input(NAMESPACE, "in", "a").build()));

    assertThat(enqueued).isEmpty();
    assertThat(statusChanged).isEmpty();
  }

  // ---- output events

  @Test
  void anOutputEventRoutesByControllerRefAndMapKeyLabelToItsParentsMapKey() {
    KubeObject parent = parentAdded(parent("p").build());
    parentAdded(parent("q").build());
    KubeObject input = input(NAMESPACE, "in", "a").build();

    // Deleted: the input's sync makes it again.
    router.onOutputEvent(deleted(output(parent, input, "out").build()));
    // Added already controlled by its parent: the echo of the engine's own create.
    router.onOutputEvent(added(output(parent, input, "out").build()));

    assertThat(enqueuedAsShown()).containsExactly(shown(keyOf(parent, input)), shown(keyOf(parent, input)));
    assertThat(triggers).extracting(Trigger::cause).containsExactly(Trigger.Cause.CHILD, Trigger.Cause.ECHO);
    assertThat(statusChanged).isEmpty();
  }

  @Test
  void anOutputWithoutTheMapKeyLabelOrOfAParentNotSelectedIsNotRouted() {
    KubeObject parent = parentAdded(parent("p").build());
    KubeObject unselected = parentAdded(parent("unselected").label("managed", "no").build());
    KubeObject input = input(NAMESPACE, "in", "a").build();

    router.onOutputEvent(added(object(MapFixture.OUTPUTS, NAMESPACE, "unlabelled").controlledBy(parent).build()));
    router.onOutputEvent(added(output(unselected, input, "of-unselected").build()));

    assertThat(enqueued).isEmpty();
    assertThat(statusChanged).isEmpty();
  }

  @Test
  void aStatusOnlyChangeOfAnOutputWithGenerationOnlyRecountsItsParent() {
    KubeObject parent = parentAdded(parent("p").build());
    KubeObject before = output(parent, input(NAMESPACE, "in", "a").build(), "out").build();

    router.onOutputEvent(updated(before, nextVersionOf(before)
        .field("status", "{\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}").build()));

    assertThat(enqueued).isEmpty();
    assertThat(statusChanged).containsExactly(parentKey("p"));
  }

  @Test
  void anUpdateOfAnOutputWithoutGenerationMapsItsInputAgain() {
    KubeObject parent = parentAdded(parent("p").build());
    KubeObject input = input(NAMESPACE, "in", "a").build();
    KubeObject before = output(parent, input, "out").generation(0).build();

    // Its data edited by someone: the sync restores it.
    router.onOutputEvent(updated(before, nextVersionOf(before).field("data", "{\"edited\": \"yes\"}").build()));

    assertThat(enqueued).containsExactly(keyOf(parent, input));
    assertThat(statusChanged).isEmpty();
  }

  @Test
  void outputResyncsAreIgnored() {
    KubeObject parent = parentAdded(parent("p").build());

    router.onOutputEvent(resync(output(parent, input(NAMESPACE, "in", "a").build(), "out").build()));

    assertThat(enqueued).isEmpty();
    assertThat(statusChanged).isEmpty();
  }
}
