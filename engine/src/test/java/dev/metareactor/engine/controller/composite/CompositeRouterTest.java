package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.controller.composite.CompositeRouterTest.Option.GENERATE_SELECTOR;
import static dev.metareactor.engine.controller.composite.CompositeRouterTest.Option.IGNORE_STATUS_CHANGES;
import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.deleted;
import static dev.metareactor.engine.testing.ObjectEvents.resync;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.OtherNamespaceChildren;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link CompositeRouter} in the unit tier: informer events handed to it directly, the parent cache in memory, and
 * the parent keys it enqueues and forgets recorded in lists. No cluster, no queue, no sync; milliseconds.
 */
class CompositeRouterTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CLUSTER_THINGS =
      new ApiResource("test.metareactor.dev", "v1", "clusterthings", "ClusterThing", false, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  /** Another kind of the parents' group. */
  private static final ApiResource WIDGETS =
      new ApiResource("test.metareactor.dev", "v1", "widgets", "Widget", true, Set.of("status"));
  /** The parents' kind in another group. */
  private static final ApiResource FOREIGN_THINGS =
      new ApiResource("other.example", "v1", "things", "Thing", true, Set.of("status"));
  private static final String FINALIZER = "metacontroller.io/compositecontroller-things";

  /** What the CompositeController's spec turns on besides its parent label selector ({@code managed=yes}). */
  enum Option {
    GENERATE_SELECTOR,
    IGNORE_STATUS_CHANGES,
    /** {@code metareactor.dev/cross-namespace-children} on the controller. */
    OTHER_NAMESPACES
  }

  private final FakeInformerLease parentCache = new FakeInformerLease(THINGS);
  private final List<ParentKey> enqueued = new ArrayList<>();
  /** The cause of each key in {@link #enqueued}, in the same order. */
  private final List<Trigger> triggers = new ArrayList<>();
  private final List<ParentKey> gone = new ArrayList<>();

  private CompositeRouter router(Option... options) {
    return router(parentCache, options);
  }

  /** A router as {@code CompositeController} wires it, over {@code parents} as the parent informer. */
  private CompositeRouter router(FakeInformerLease parents, Option... options) {
    Set<Option> on = Set.of(options);
    ApiResource resource = parents.resource();
    CompositeControllerSpec spec = CompositeControllerSpec.parse(KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things"},
         "spec": {"generateSelector": %b,
                  "parentResource": {"apiVersion": "%s", "resource": "%s",
                                     "labelSelector": {"matchLabels": {"managed": "yes"}},
                                     "ignoreStatusChanges": %b},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}}}}"""
        .formatted(on.contains(GENERATE_SELECTOR), resource.apiVersion(), resource.resource(),
            on.contains(IGNORE_STATUS_CHANGES))));
    assertThat(spec.finalizerName()).isEqualTo(FINALIZER);
    SyncedResource synced = new SyncedResource(resource, parents,
        parent -> spec.parentSelector().matches(parent.labels()), new Finalizers(FINALIZER, new RecordingApi()));
    return new CompositeRouter(spec, synced, (key, trigger) -> {
      enqueued.add(key);
      triggers.add(trigger);
    }, gone::add, on.contains(Option.OTHER_NAMESPACES));
  }

  /** A parent in namespace {@code team} that the controller's label selector matches. */
  private static KubeObjectBuilder managedParent(String name) {
    return object(THINGS, "team", name).label("managed", "yes");
  }

  /** A managed parent whose {@code spec.selector} claims children labelled {@code app=<app>}. */
  private static KubeObjectBuilder parentSelectingApp(String namespace, String name, String app) {
    return object(THINGS, namespace, name).label("managed", "yes").field("spec", specSelectingApp(app));
  }

  private static String specSelectingApp(String app) {
    return "{\"selector\": {\"matchLabels\": {\"app\": \"" + app + "\"}}}";
  }

  /**
   * Puts {@code parent} in the informer cache and tells the router it was added, as the informer would; then forgets
   * what that enqueued, so that a test's assertions speak of the events it is about.
   */
  private KubeObject parentAdded(CompositeRouter router, KubeObject parent) {
    parentCache.put(parent);
    router.onParentEvent(added(parent));
    clearRecords();
    return parent;
  }

  /** The same for an update of a parent: its new state cached, the router told, what that enqueued forgotten. */
  private void parentUpdated(CompositeRouter router, KubeObject before, KubeObject after) {
    parentCache.put(after);
    router.onParentEvent(updated(before, after));
    clearRecords();
  }

  /**
   * Asserts that, after a change of parent p's selector, an orphan labelled {@code label=stale} (what the old
   * selector claimed) goes to no parent, and one labelled {@code label=current} goes to p.
   */
  private void assertOrphansGoOnlyToTheNewSelector(CompositeRouter router, String label, String stale,
      String current) {
    router.onChildEvent(added(orphanLabelled(label, stale)));
    assertThat(enqueued).as("what the old selector claimed goes to no parent").isEmpty();
    router.onChildEvent(added(orphanLabelled(label, current)));
    assertThat(enqueued).containsExactly(key("p"));
  }

  private static KubeObjectBuilder child(String name) {
    return object(CONFIG_MAPS, "team", name);
  }

  /** An orphan ConfigMap in {@code team} labelled {@code key=value}. */
  private static KubeObject orphanLabelled(String key, String value) {
    return child("orphan").label(key, value).build();
  }

  private static ParentKey key(String name) {
    return new ParentKey("team", name);
  }

  /** Forgets what the router enqueued and forgot so far. */
  private void clearRecords() {
    enqueued.clear();
    triggers.clear();
    gone.clear();
  }

  // ---- parent events

  @Test
  void aParentTheLabelSelectorMatchesIsEnqueued() {
    router().onParentEvent(added(managedParent("p").build()));

    assertThat(enqueued).containsExactly(key("p"));
  }

  @Test
  void aParentTheLabelSelectorDoesNotMatchIsNotEnqueued() {
    CompositeRouter router = router();

    router.onParentEvent(added(object(THINGS, "team", "unlabelled").build()));
    router.onParentEvent(added(object(THINGS, "team", "other").label("managed", "no").build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aDeselectedParentStillCarryingTheFinalizerIsEnqueuedToBeFinalized() {
    CompositeRouter router = router();
    KubeObject before = managedParent("p").finalizer(FINALIZER).build();

    router.onParentEvent(updated(before, nextVersionOf(before).label("managed", "no").build()));

    assertThat(enqueued).containsExactly(key("p"));
  }

  @Test
  void withIgnoreStatusChangesAStatusOnlyUpdateIsDropped() {
    CompositeRouter router = router(IGNORE_STATUS_CHANGES);
    KubeObject before = managedParent("p").build();

    router.onParentEvent(updated(before, nextVersionOf(before).field("status", "{\"ready\": true}").build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void withIgnoreStatusChangesASpecChangeAndAResyncAreStillEnqueued() {
    CompositeRouter router = router(IGNORE_STATUS_CHANGES);
    KubeObject before = managedParent("p").build();

    router.onParentEvent(updated(before, nextVersionOf(before).generation(2).build()));
    // A resync is how a controller with resyncPeriodSeconds gets its parents synced again: never dropped.
    router.onParentEvent(resync(before));

    assertThat(enqueued).containsExactly(key("p"), key("p"));
  }

  @Test
  void withoutIgnoreStatusChangesAStatusOnlyUpdateIsEnqueued() {
    CompositeRouter router = router();
    KubeObject before = managedParent("p").build();

    router.onParentEvent(updated(before, nextVersionOf(before).field("status", "{\"ready\": true}").build()));

    assertThat(enqueued).containsExactly(key("p"));
  }

  @Test
  void aDeletedParentIsForgottenAndNoLongerAdoptsOrphans() {
    CompositeRouter router = router(GENERATE_SELECTOR);
    KubeObject parent = parentAdded(router, managedParent("p").build());
    KubeObject orphan = orphanLabelled(ChildSelector.CONTROLLER_UID_LABEL, "p-uid");
    router.onChildEvent(added(orphan));
    assertThat(enqueued).as("before the deletion, the orphan goes to p").containsExactly(key("p"));
    clearRecords();

    router.onParentEvent(deleted(parent));
    assertThat(gone).containsExactly(key("p"));
    // Enqueued too: its sync finds it gone from the cache and does nothing.
    assertThat(enqueued).containsExactly(key("p"));
    clearRecords();

    // The cache still holds p, so that only the selector index can keep the orphan from being routed to it.
    router.onChildEvent(updated(orphan, nextVersionOf(orphan).build()));
    assertThat(enqueued).isEmpty();
  }

  // ---- child events with a ControllerRef

  @Test
  void aChildIsRoutedToTheParentItsControllerRefNames() {
    CompositeRouter router = router();
    KubeObject parent = parentAdded(router, managedParent("p").build());
    parentAdded(router, managedParent("q").build());

    router.onChildEvent(added(child("c").controlledBy(parent).build()));

    assertThat(enqueued).containsExactly(key("p"));
    assertThat(triggers).as("a child added already controlled by its parent: the engine's own create")
        .containsExactly(Trigger.about(Trigger.Cause.ECHO, Trigger.Change.CREATED, "ConfigMap", "team", "c"));
  }

  @Test
  void aDeletedChildEnqueuesItsParent() {
    CompositeRouter router = router();
    KubeObject parent = parentAdded(router, managedParent("p").build());

    // The parent's sync must see the child gone (and create it again if the hook still wants it).
    router.onChildEvent(deleted(child("c").controlledBy(parent).build()));

    assertThat(enqueued).containsExactly(key("p"));
    assertThat(triggers)
        .containsExactly(Trigger.about(Trigger.Cause.CHILD, Trigger.Change.DELETED, "ConfigMap", "team", "c"));
  }

  @Test
  void aChildOfAnEarlierParentOfTheSameNameIsNotRouted() {
    CompositeRouter router = router();
    KubeObject earlier = managedParent("p").build();
    parentAdded(router, nextVersionOf(earlier).uid("recreated-uid").build());

    router.onChildEvent(added(child("c").controlledBy(earlier).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aChildControlledByAnotherResourceOfTheSameNameAndUidIsNotRouted() {
    CompositeRouter router = router();
    parentAdded(router, managedParent("p").build());
    // Each differs from the parent resource in one way only, so that the kind and the group are each checked.
    KubeObject widget = object(WIDGETS, "team", "p").build();
    KubeObject foreignThing = object(FOREIGN_THINGS, "team", "p").build();
    String parentUid = parentCache.get("team", "p").orElseThrow().uid();
    assertThat(List.of(widget.uid(), foreignThing.uid())).containsOnly(parentUid);

    router.onChildEvent(added(child("c").controlledBy(widget).build()));
    router.onChildEvent(added(child("d").controlledBy(foreignThing).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aChildOfAParentTheControllerIsNotResponsibleForIsNotRouted() {
    CompositeRouter router = router();
    KubeObject parent = object(THINGS, "team", "p").label("managed", "no").build();
    parentAdded(router, parent);

    router.onChildEvent(added(child("c").controlledBy(parent).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aChildMovedToAnotherParentEnqueuesBoth() {
    CompositeRouter router = router();
    KubeObject from = parentAdded(router, managedParent("from").build());
    KubeObject to = parentAdded(router, managedParent("to").build());
    KubeObject before = child("c").controlledBy(from).build();

    router.onChildEvent(updated(before, nextVersionOf(before).controlledBy(to).build()));

    assertThat(enqueued).containsExactlyInAnyOrder(key("from"), key("to"));
  }

  @Test
  void aReleasedChildEnqueuesTheParentItLeft() {
    CompositeRouter router = router();
    KubeObject parent = parentAdded(router, parentSelectingApp("team", "p", "web").build());
    KubeObject before = child("c").label("app", "web").controlledBy(parent).build();

    // Relabelled and released (what the claimer does to a child its parent no longer selects): p must notice.
    router.onChildEvent(updated(before, nextVersionOf(before).label("app", "db").controlledBy(null).build()));

    assertThat(enqueued).containsExactly(key("p"));
  }

  /** A ConfigMap in namespace {@code shared} marked as {@code parent}'s child (as the engine creates one there). */
  private static KubeObjectBuilder childElsewhere(String name, KubeObject parent) {
    return object(CONFIG_MAPS, "shared", name)
        .label(OtherNamespaceChildren.PARENT_UID_LABEL, parent.uid())
        .annotation(OtherNamespaceChildren.PARENT_ANNOTATION, parent.namespacedName());
  }

  @Test
  void aChildInAnotherNamespaceIsRoutedToTheParentItsLabelAndAnnotationName() {
    CompositeRouter router = router(Option.OTHER_NAMESPACES);
    KubeObject parent = parentAdded(router, managedParent("p").build());
    parentAdded(router, managedParent("q").build());

    router.onChildEvent(added(childElsewhere("c", parent).build()));
    router.onChildEvent(deleted(childElsewhere("d", parent).build()));

    assertThat(enqueued).containsExactly(key("p"), key("p"));
    assertThat(triggers).containsExactly(
        Trigger.about(Trigger.Cause.ECHO, Trigger.Change.CREATED, "ConfigMap", "shared", "c"),
        Trigger.about(Trigger.Cause.CHILD, Trigger.Change.DELETED, "ConfigMap", "shared", "d"));
  }

  @Test
  void aChildElsewhereNamingAnEarlierParentOfTheNameOrWithoutTheAnnotationIsNotRouted() {
    CompositeRouter router = router(Option.OTHER_NAMESPACES);
    KubeObject earlier = managedParent("p").build();
    KubeObject parent = parentAdded(router, nextVersionOf(earlier).uid("recreated-uid").build());

    router.onChildEvent(added(childElsewhere("c", earlier).build()));
    router.onChildEvent(added(object(CONFIG_MAPS, "shared", "d")
        .label(OtherNamespaceChildren.PARENT_UID_LABEL, parent.uid()).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void withoutTheAnnotationAChildElsewhereIsNotRouted() {
    CompositeRouter router = router();
    KubeObject parent = parentAdded(router, managedParent("p").build());

    router.onChildEvent(added(childElsewhere("c", parent).build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aChildElsewhereReleasedEnqueuesTheParentItLeft() {
    CompositeRouter router = router(Option.OTHER_NAMESPACES);
    KubeObject parent = parentAdded(router, managedParent("p").build());
    KubeObject before = childElsewhere("c", parent).build();

    router.onChildEvent(updated(before, object(CONFIG_MAPS, "shared", "c").resourceVersion("2").build()));

    assertThat(enqueued).containsExactly(key("p"));
  }

  @Test
  void aChildMarkedForAParentInAnotherNamespaceIsNoOrphanToAdopt() {
    CompositeRouter router = router(Option.OTHER_NAMESPACES);
    parentAdded(router, parentSelectingApp("team", "p", "web").build());
    KubeObject elsewhere = object(THINGS, "other", "o").build();

    router.onChildEvent(added(child("c").label("app", "web")
        .label(OtherNamespaceChildren.PARENT_UID_LABEL, elsewhere.uid())
        .annotation(OtherNamespaceChildren.PARENT_ANNOTATION, elsewhere.namespacedName()).build()));

    assertThat(enqueued).as("the child of other/o, not an orphan of team").isEmpty();
  }

  @Test
  void childResyncsAreIgnored() {
    CompositeRouter router = router(GENERATE_SELECTOR);
    KubeObject parent = parentAdded(router, managedParent("p").build());

    router.onChildEvent(resync(child("owned").controlledBy(parent).build()));
    router.onChildEvent(resync(orphanLabelled(ChildSelector.CONTROLLER_UID_LABEL, "p-uid")));

    assertThat(enqueued).isEmpty();
  }

  // ---- orphans

  @Test
  void anOrphanEnqueuesTheParentWhoseGeneratedSelectorMatchesIt() {
    CompositeRouter router = router(GENERATE_SELECTOR);
    parentAdded(router, managedParent("p").build());
    parentAdded(router, managedParent("q").build());

    router.onChildEvent(added(orphanLabelled(ChildSelector.CONTROLLER_UID_LABEL, "p-uid")));
    assertThat(triggers).as("an orphan to adopt is a change, not an echo")
        .containsExactly(Trigger.about(Trigger.Cause.CHILD, Trigger.Change.CREATED, "ConfigMap", "team", "orphan"));

    assertThat(enqueued).containsExactly(key("p"));
  }

  @Test
  void anOrphanEnqueuesTheParentsWhoseSpecSelectorMatchesIt() {
    CompositeRouter router = router();
    parentAdded(router, parentSelectingApp("team", "web", "web").build());
    // A selector without one exact label value is filed apart in the index; it must be found all the same.
    parentAdded(router, managedParent("web-or-api").field("spec", """
        {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}}""")
        .build());
    parentAdded(router, parentSelectingApp("team", "db", "db").build());

    router.onChildEvent(added(orphanLabelled("app", "web")));

    assertThat(enqueued).containsExactlyInAnyOrder(key("web"), key("web-or-api"));
  }

  @Test
  void aDeletedOrDyingOrphanEnqueuesNoParent() {
    CompositeRouter router = router();
    parentAdded(router, parentSelectingApp("team", "p", "web").build());
    KubeObject orphan = orphanLabelled("app", "web");

    router.onChildEvent(deleted(orphan));
    router.onChildEvent(updated(orphan, nextVersionOf(orphan).deleting().build()));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void anOrphanEnqueuesNoParentInAnotherNamespace() {
    CompositeRouter router = router();
    parentAdded(router, parentSelectingApp("elsewhere", "p", "web").build());

    router.onChildEvent(added(orphanLabelled("app", "web")));

    assertThat(enqueued).isEmpty();
  }

  @Test
  void aClusterScopedParentIsKeyedWithoutNamespaceAndAdoptsInEveryNamespace() {
    FakeInformerLease clusterParents = new FakeInformerLease(CLUSTER_THINGS);
    CompositeRouter router = router(clusterParents, GENERATE_SELECTOR);
    KubeObject parent = object(CLUSTER_THINGS, "", "global").label("managed", "yes").build();
    clusterParents.put(parent);
    router.onParentEvent(added(parent));
    assertThat(enqueued).containsExactly(new ParentKey("", "global"));
    clearRecords();

    router.onChildEvent(added(orphanLabelled(ChildSelector.CONTROLLER_UID_LABEL, "global-uid")));
    router.onChildEvent(added(child("owned").controlledBy(parent).build()));

    assertThat(enqueued).containsExactly(new ParentKey("", "global"), new ParentKey("", "global"));
  }

  // ---- a parent's selector changing

  @Test
  void aParentWhoseSpecSelectorChangesWithItsGenerationIsRefiled() {
    CompositeRouter router = router();
    KubeObject before = parentAdded(router, parentSelectingApp("team", "p", "web").build());
    parentUpdated(router, before, nextVersionOf(before).generation(2).field("spec", specSelectingApp("db")).build());

    assertOrphansGoOnlyToTheNewSelector(router, "app", "web", "db");
  }

  @Test
  void aParentWithoutGenerationIsRefiledOnEveryUpdate() {
    CompositeRouter router = router();
    // Without metadata.generation, nothing tells a spec change from a status write: the selector is read each time.
    KubeObject before = parentAdded(router, parentSelectingApp("team", "p", "web").generation(0).build());
    parentUpdated(router, before, nextVersionOf(before).field("spec", specSelectingApp("db")).build());

    assertOrphansGoOnlyToTheNewSelector(router, "app", "web", "db");
  }

  @Test
  void aParentRecreatedUnderTheSameNameIsRefiledUnderItsNewUid() {
    CompositeRouter router = router(GENERATE_SELECTOR);
    KubeObject before = parentAdded(router, managedParent("p").build());
    // An informer that relisted after missing the deletion sees an update from the old object to the new one.
    parentUpdated(router, before, nextVersionOf(before).uid("recreated-uid").build());

    assertOrphansGoOnlyToTheNewSelector(router, ChildSelector.CONTROLLER_UID_LABEL, "p-uid", "recreated-uid");
  }

  @Test
  void aParentWithoutAUsableSelectorIsEnqueuedButAdoptsNothing() {
    CompositeRouter router = router();
    KubeObject parent = managedParent("p").build();
    parentCache.put(parent);

    // No spec.selector: its sync reports the error, so the parent is still enqueued.
    router.onParentEvent(added(parent));
    assertThat(enqueued).containsExactly(key("p"));
    clearRecords();

    router.onChildEvent(added(orphanLabelled("app", "web")));
    assertThat(enqueued).isEmpty();
  }

  @Test
  void aParentWhoseSelectorBecomesUnusableStopsAdopting() {
    CompositeRouter router = router();
    KubeObject before = parentAdded(router, parentSelectingApp("team", "p", "web").build());
    parentUpdated(router, before, nextVersionOf(before).generation(2).field("spec", "{\"selector\": {}}").build());

    router.onChildEvent(added(orphanLabelled("app", "web")));

    assertThat(enqueued).isEmpty();
  }

  // ---- causes of a parent's own events

  @Test
  void eachParentEventNamesWhatChanged() {
    CompositeRouter router = router();
    KubeObject parent = managedParent("p").generation(1).build();
    router.onParentEvent(added(parent));
    KubeObject edited = nextVersionOf(parent).generation(2).build();
    router.onParentEvent(updated(parent, edited));
    KubeObject relabelled = nextVersionOf(edited).label("tier", "gold").build();
    router.onParentEvent(updated(edited, relabelled));
    KubeObject poked = nextVersionOf(relabelled).annotation(ObjectEvent.SYNC_REQUESTED_AT, "2026-11-27T03:00:00Z")
        .build();
    router.onParentEvent(updated(relabelled, poked));
    KubeObject withStatus = nextVersionOf(poked).field("status", "{\"ready\": true}").build();
    router.onParentEvent(updated(poked, withStatus));
    router.onParentEvent(resync(withStatus));
    router.onParentEvent(deleted(withStatus));

    assertThat(triggers).extracting(Trigger::cause).containsExactly(Trigger.Cause.CREATED, Trigger.Cause.SPEC,
        Trigger.Cause.METADATA, Trigger.Cause.SYNC_REQUESTED, Trigger.Cause.STATUS, Trigger.Cause.CACHE_FLUSH,
        Trigger.Cause.DELETED);
  }
  @Test
  void aChildTypeThatIgnoresStatusChangesDropsAStatusOnlyUpdateButNotAChangeOfItsData() {
    CompositeRouter router = router();
    KubeObject parent = parentAdded(router, managedParent("p").build());
    ChildType quiet = new ChildType(CONFIG_MAPS, new FakeInformerLease(CONFIG_MAPS), UpdateMethod.IN_PLACE,
        List.of(), true);
    KubeObject before = child("p-a").controlledBy(parent).generation(0).build();

    router.onChildEvent(quiet, updated(before, nextVersionOf(before).field("status", "{\"seen\": 1}").build()));
    assertThat(enqueued).as("a change of status alone").isEmpty();

    router.onChildEvent(quiet, updated(before, nextVersionOf(before).field("data", "{\"a\": \"b\"}").build()));
    assertThat(enqueued).as("a change of data, no generation kept").containsExactly(key("p"));
  }

  @Test
  void aChildTypeThatDoesNotIgnoreStatusChangesRoutesAStatusOnlyUpdate() {
    CompositeRouter router = router(IGNORE_STATUS_CHANGES);
    KubeObject parent = parentAdded(router, managedParent("p").build());
    ChildType plain = new ChildType(CONFIG_MAPS, new FakeInformerLease(CONFIG_MAPS), UpdateMethod.IN_PLACE);
    KubeObject before = child("p-a").controlledBy(parent).build();

    // The parent's ignoreStatusChanges is about the parent's own status only.
    router.onChildEvent(plain, updated(before, nextVersionOf(before).field("status", "{\"seen\": 1}").build()));

    assertThat(enqueued).containsExactly(key("p"));
  }
}
