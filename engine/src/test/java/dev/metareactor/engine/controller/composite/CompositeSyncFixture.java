package dev.metareactor.engine.controller.composite;

import dev.metareactor.apply.DynamicApply;
import dev.metareactor.engine.api.ChildStatusAnnotation;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.api.DeleteParentAnnotation;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.config.HotLoopSettings;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildStatus;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.ChosenHook;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.HotLoopGuard;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.node.ObjectNode;

/**
 * A CompositeController's sync wired as {@link CompositeController} wires it, over in-memory fakes: the real
 * {@link ObjectSync}, {@link CompositeSync}, claimer, children manager and finalizers; the parents
 * ({@code things.test.metareactor.dev}, with a status subresource) and their ConfigMap children in
 * {@link FakeInformerLease}s; every request made to a {@link RecordingApi}; the sync hook the {@link HookCaller}
 * given. The controller generates its selector, updates children in place and has no finalize or customize hook.
 *
 * <p>Public, and part of the engine's test-jar, so that the benchmarks run this very sync (SyncBenchmark).
 */
public final class CompositeSyncFixture {

  /** The parents' resource. */
  public static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  /** The children's resource. */
  public static final ApiResource CONFIG_MAPS =
      new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  /** The namespace of every parent and child. */
  public static final String NAMESPACE = "team";

  private final RecordingApi api = new RecordingApi();
  private final FakeInformerLease parents = new FakeInformerLease(THINGS);
  private final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  private final ObjectSync<ParentKey> sync;
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final List<String> conflicts = new CopyOnWriteArrayList<>();
  private final AtomicInteger hotLoops = new AtomicInteger();

  /** @param syncHook answers every sync request */
  public CompositeSyncFixture(HookCaller syncHook) {
    this(syncHook, false, ObjectSync.Placement.HERE, ApplyStrategy.DYNAMIC_APPLY, Map.of());
  }

  /**
   * @param syncHook answers every sync request
   * @param annotations the controller object's annotations
   */
  public CompositeSyncFixture(HookCaller syncHook, Map<String, String> annotations) {
    this(syncHook, annotations, ObjectSync.Placement.HERE, ApplyStrategy.DYNAMIC_APPLY, Map.of());
  }

  /**
   * @param syncHook answers every sync request
   * @param deleteGuard whether the controller object carries {@code metareactor.dev/delete-guard: "true"}
   */
  public CompositeSyncFixture(HookCaller syncHook, boolean deleteGuard) {
    this(syncHook, deleteGuard, ObjectSync.Placement.HERE, ApplyStrategy.DYNAMIC_APPLY, Map.of());
  }

  /**
   * @param syncHook answers every sync request
   * @param placement where each parent is synced (with {@code --sharding}: moved, held back, or here)
   */
  public CompositeSyncFixture(HookCaller syncHook, ObjectSync.Placement placement) {
    this(syncHook, false, placement, ApplyStrategy.DYNAMIC_APPLY, Map.of());
  }

  /**
   * @param strategy how children are written
   * @param ownLabels the labels the applier keeps on every child (with {@code --sharding}, the shard's)
   */
  public CompositeSyncFixture(HookCaller syncHook, ApplyStrategy strategy, Map<String, String> ownLabels) {
    this(syncHook, false, ObjectSync.Placement.HERE, strategy, ownLabels);
  }

  /**
   * @param syncHook answers every sync request
   * @param finalizeHook answers every finalize request: the controller has a finalize hook
   * @param annotations the controller object's annotations
   */
  public CompositeSyncFixture(HookCaller syncHook, HookCaller finalizeHook, Map<String, String> annotations) {
    this(syncHook, finalizeHook, annotations, ObjectSync.Placement.HERE, ApplyStrategy.DYNAMIC_APPLY, Map.of(),
        HotLoopSettings.OFF);
  }

  /**
   * @param annotations the controller object's annotations
   * @param strategy how children are written
   */
  public CompositeSyncFixture(HookCaller syncHook, Map<String, String> annotations, ApplyStrategy strategy) {
    this(syncHook, annotations, ObjectSync.Placement.HERE, strategy, Map.of());
  }

  /** @param deleteGuard whether the controller object carries {@code metareactor.dev/delete-guard: "true"} */
  public CompositeSyncFixture(HookCaller syncHook, boolean deleteGuard, ApplyStrategy strategy,
      Map<String, String> ownLabels) {
    this(syncHook, deleteGuard, ObjectSync.Placement.HERE, strategy, ownLabels);
  }

  private CompositeSyncFixture(HookCaller syncHook, boolean deleteGuard, ObjectSync.Placement placement,
      ApplyStrategy strategy, Map<String, String> ownLabels) {
    this(syncHook, Map.of(DeleteGuardAnnotation.KEY, Boolean.toString(deleteGuard)), placement, strategy, ownLabels);
  }

  /**
   * @param syncHook answers every sync request
   * @param hotLoops when a parent's syncs go round in a loop ({@link HotLoopGuard}, off in the other fixtures); its
   *     {@code HotLoop} Warnings go to {@link #events()}, each loop found is counted in {@link #hotLoops()}
   */
  public CompositeSyncFixture(HookCaller syncHook, HotLoopSettings hotLoops) {
    this(syncHook, null, Map.of(DeleteGuardAnnotation.KEY, "false"), ObjectSync.Placement.HERE,
        ApplyStrategy.DYNAMIC_APPLY, Map.of(), hotLoops);
  }

  private CompositeSyncFixture(HookCaller syncHook, Map<String, String> annotations, ObjectSync.Placement placement,
      ApplyStrategy strategy, Map<String, String> ownLabels) {
    this(syncHook, null, annotations, placement, strategy, ownLabels, HotLoopSettings.OFF);
  }

  private CompositeSyncFixture(HookCaller syncHook, @Nullable HookCaller finalizeHook, Map<String, String> annotations,
      ObjectSync.Placement placement, ApplyStrategy strategy, Map<String, String> ownLabels, HotLoopSettings hotLoops) {
    String finalize = finalizeHook == null ? ""
        : ", \"finalize\": {\"webhook\": {\"url\": \"http://hook.invalid/finalize\"}}";
    ObjectNode controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "annotations": %s},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps",
                                      "updateStrategy": {"method": "InPlace"}}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}%s}}}"""
        .formatted(KubeJson.mapper().writeValueAsString(annotations), finalize));
    CompositeControllerSpec spec = CompositeControllerSpec.parse(controller);
    Finalizers finalizers = new Finalizers(spec.finalizerName(), api);
    SyncedResource parentType = new SyncedResource(THINGS, parents,
        parent -> spec.parentSelector().matches(parent.labels()), finalizers);
    List<ChildType> childTypes = List.of(new ChildType(CONFIG_MAPS, configMaps, spec.children().get(0).updateMethod()));
    CompositeSync kind = new CompositeSync(spec, parentType, childTypes, new ChildClaimer(api), api, null,
        this::record, DeleteParentAnnotation.allowed(annotations), CrossNamespaceChildren.of(annotations));
    ChosenHook hook = new ChosenHook("sync", syncHook, spec.syncHook().get(), ChosenHook.Purpose.DESIRED_STATE);
    sync = new ObjectSync<>(kind, CompositeSync.SHAPE, "CompositeController things", controller,
        new ObjectSync.Hooks(hook, finalizeHook == null ? null : new ChosenHook("finalize", finalizeHook,
            spec.finalizeHook().orElseThrow(), ChosenHook.Purpose.FINALIZE)),
        new RelatedObjects<>("CompositeController", "things", controller, null, Optional.empty(), null,
            (key, trigger) -> {}),
        new ChildrenManager(api, ChildApplier.of(strategy, api, "metacontroller", ownLabels), this::record,
            (resource, holder) -> conflicts.add(resource.resource() + " " + holder.tag()),
            ChildStatusAnnotation.enabled(annotations)
                ? new ChildStatus(api, strategy, "metacontroller", this::record) : null),
        finalizers, this::record, placement, new HotLoopGuard(hotLoops, this::record, this.hotLoops::incrementAndGet));
  }

  private void record(KubeObject object, EventRecorder.Type type, String reason, String message) {
    events.add(object.name() + ": " + type + " " + reason + " " + message);
  }

  /** The Events the syncs recorded, {@code <object>: <type> <reason> <message>} each. */
  public List<String> events() {
    return events;
  }

  /** The conflicts over desired children the syncs counted, {@code <resource> <holder>} each. */
  public List<String> conflicts() {
    return conflicts;
  }

  /** How many hot loops the syncs found. */
  public int hotLoops() {
    return hotLoops.get();
  }

  /** The sync itself, for a test that runs it as the work queue does. */
  public ObjectSync<ParentKey> objectSync() {
    return sync;
  }

  /** Every request the syncs made. */
  public RecordingApi api() {
    return api;
  }

  /** The children's informer cache. */
  public FakeInformerLease configMaps() {
    return configMaps;
  }

  /** The parents' informer cache. */
  public FakeInformerLease parents() {
    return parents;
  }

  /**
   * Caches a parent of generation 1 in {@link #NAMESPACE}.
   *
   * @param spec its {@code spec}, JSON
   * @param status its {@code status}, JSON
   * @return the parent as cached
   */
  public KubeObject parent(String name, String uid, String spec, String status) {
    KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "%s", "namespace": "%s", "uid": "%s", "generation": 1, "resourceVersion": "7"},
         "spec": %s, "status": %s}""".formatted(name, NAMESPACE, uid, spec, status)));
    parents.put(parent);
    return parent;
  }

  /**
   * Caches a child as an earlier sync of {@code parent} created it from the hook's {@code desired} object: with the
   * {@code controller-uid} label, the last-applied annotation, a ControllerRef to the parent, a UID (its name with
   * {@code -uid}) and a resourceVersion.
   *
   * @return the child as cached
   */
  public KubeObject childAsCreated(KubeObject parent, ObjectNode desired) {
    ObjectNode labelled = desired.deepCopy();
    ObjectNode metadata = (ObjectNode) labelled.get("metadata");
    ObjectNode labels = metadata.has("labels") ? (ObjectNode) metadata.get("labels") : metadata.putObject("labels");
    labels.put(ChildSelector.CONTROLLER_UID_LABEL, parent.uid());
    ObjectNode created = DynamicApply.create(labelled).object();
    ObjectNode createdMetadata = (ObjectNode) created.get("metadata");
    createdMetadata.put("uid", metadata.get("name").asString() + "-uid").put("resourceVersion", "9");
    OwnerRef.controllerOf(parent).appendTo(createdMetadata.putArray("ownerReferences"));
    KubeObject child = KubeObject.of(created);
    configMaps.put(child);
    return child;
  }

  /** Syncs the parent {@code name} of {@link #NAMESPACE}, waiting at most five seconds. */
  public Optional<Duration> sync(String name) {
    return sync.sync(new ParentKey(NAMESPACE, name)).block(Duration.ofSeconds(5));
  }
}
