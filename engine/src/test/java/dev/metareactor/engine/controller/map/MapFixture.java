package dev.metareactor.engine.controller.map;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;

import dev.metareactor.engine.api.MapControllerSpec;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.ChosenHook;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentEvents;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.node.ObjectNode;

/**
 * A MapController's pieces wired as {@link MapController} wires them, over in-memory fakes, for the unit tests of
 * each: parents ({@code schedules}, namespaced, with a status subresource) selected by the label
 * {@code managed=yes}; two input resources, ConfigMaps (namespaced) and Nodes (cluster-scoped); one output resource
 * ({@code outputs}, with a status subresource). Every cache is a {@link FakeInformerLease}, every request goes to a
 * {@link RecordingApi}, and each parent the sync says changed is recorded in {@link #statusChanged}.
 */
final class MapFixture {

  static final ApiResource SCHEDULES =
      new ApiResource("test.metareactor.dev", "v1", "schedules", "Schedule", true, Set.of("status"));
  static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  static final ApiResource NODES = new ApiResource("", "v1", "nodes", "Node", false, Set.of("status"));
  static final ApiResource OUTPUTS =
      new ApiResource("test.metareactor.dev", "v1", "outputs", "Output", true, Set.of("status"));
  /** The namespace of the parents, inputs and outputs unless a test says otherwise. */
  static final String NAMESPACE = "team";

  final RecordingApi api = new RecordingApi();
  final FakeInformerLease parents = new FakeInformerLease(SCHEDULES);
  final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  final FakeInformerLease nodes = new FakeInformerLease(NODES);
  final FakeInformerLease outputs = new FakeInformerLease(OUTPUTS);
  /** The parents whose status the sync said may have changed, in order. */
  final List<ParentKey> statusChanged = new CopyOnWriteArrayList<>();
  /** The Events the syncs recorded, {@code <object>: <type> <reason> <message>} each. */
  final List<String> events = new CopyOnWriteArrayList<>();
  final ObjectNode controller;
  final MapControllerSpec spec;
  final Finalizers finalizers;
  final SyncedResource parentType;
  final List<ApiResource> inputResources = List.of(CONFIG_MAPS, NODES);
  final List<ChildType> outputTypes;
  /** The tombstone hook, or {@code null}. */
  private final @Nullable ChosenHook tombstoneHook;
  /** The kind as routing and status counting use it (it calls no hook). */
  final MapSync kind;
  /** How outputs are written. */
  final ApplyStrategy strategy;

  /** A MapController without a tombstone hook. */
  MapFixture() {
    this(null);
  }

  /** @param tombstone answers every tombstone request; {@code null} for a MapController without that hook */
  MapFixture(HookCaller tombstone) {
    this(tombstone, false);
  }

  /**
   * @param tombstone answers every tombstone request; {@code null} for a MapController without that hook
   * @param deleteGuard whether the controller carries {@code metareactor.dev/delete-guard: "true"}
   */
  MapFixture(HookCaller tombstone, boolean deleteGuard) {
    this(tombstone, deleteGuard, ApplyStrategy.DYNAMIC_APPLY);
  }

  /** @param strategy how outputs are written */
  MapFixture(HookCaller tombstone, boolean deleteGuard, ApplyStrategy strategy) {
    this.strategy = strategy;
    controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "MapController",
         "metadata": {"name": "snapshots", "annotations": {"metareactor.dev/delete-guard": "%s"}},
         "spec": {"parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "schedules",
                                     "labelSelector": {"matchLabels": {"managed": "yes"}}},
                  "inputResources": [{"apiVersion": "v1", "resource": "configmaps"},
                                     {"apiVersion": "v1", "resource": "nodes"}],
                  "outputResources": [{"apiVersion": "test.metareactor.dev/v1", "resource": "outputs",
                                       "updateStrategy": {"method": "InPlace"}}],
                  "hooks": {"map": {"webhook": {"url": "http://hook.invalid/map"}}%s}}}"""
        .formatted(deleteGuard, tombstone == null ? "" : ", \"tombstone\": {\"webhook\": {\"url\": \"http://hook.invalid/t\"}}"));
    spec = MapControllerSpec.parse(controller);
    finalizers = new Finalizers(spec.finalizerName(), api);
    parentType = new SyncedResource(SCHEDULES, parents, parent -> spec.parentSelector().matches(parent.labels()),
        finalizers);
    outputTypes = List.of(new ChildType(OUTPUTS, outputs, spec.outputs().get(0).updateMethod()));
    tombstoneHook = tombstone == null ? null
        : new ChosenHook("tombstone", tombstone, spec.tombstoneHook().orElseThrow(), ChosenHook.Purpose.TEAR_DOWN);
    kind = mapSync((request, root) -> Mono.error(new AssertionError("routing and counting call no hook")));
  }

  private MapSync mapSync(HookCaller map) {
    return new MapSync(spec, parentType, inputResources,
        MapSync.Inputs.of(Map.of(CONFIG_MAPS, configMaps, NODES, nodes)), outputTypes,
        new ChosenHook("map", map, spec.mapHook(), ChosenHook.Purpose.DESIRED_STATE), tombstoneHook,
        statusChanged::add);
  }

  /** The sync the work queue's workers run, calling {@code map} for every input that is there. */
  ObjectSync<MapKey> objectSync(HookCaller map) {
    return new ObjectSync<>(mapSync(map), MapSync.SHAPE, "MapController snapshots", controller,
        ObjectSync.Hooks.NONE,
        new RelatedObjects<>("MapController", "snapshots", controller, null, Optional.empty(), null,
            (key, trigger) -> {}),
        new ChildrenManager(api, ChildApplier.of(strategy, api, "metacontroller"), recorded()),
        finalizers, recorded());
  }

  /** The router, handing what it finds to the given consumers. */
  MapRouter router(BiConsumer<MapKey, Trigger> enqueue, Consumer<ParentKey> statusChanged, Consumer<ParentKey> gone) {
    return new MapRouter(parentType, kind::keysOf, kind::inputOf, enqueue, statusChanged, gone);
  }

  /** The status writer, its timers on {@code scheduler} and its clock {@code nanoTime}, its caches synced. */
  MapStatus status(Scheduler scheduler, LongSupplier nanoTime) {
    return status(scheduler, nanoTime, () -> true);
  }

  /** The status writer, its caches synced when {@code cachesSynced} says so. */
  MapStatus status(Scheduler scheduler, LongSupplier nanoTime, BooleanSupplier cachesSynced) {
    return new MapStatus("MapController snapshots", parentType, inputResources,
        parent -> MapController.inputCounts(kind, parent, inputResources), outputTypes, api, recorded(), scheduler,
        nanoTime, cachesSynced);
  }

  /** Records each Event in {@link #events}. */
  private ParentEvents recorded() {
    return (object, eventType, reason, message) ->
        events.add(object.name() + ": " + eventType + " " + reason + " " + message);
  }

  /** Caches {@code object} in {@code cache} and returns it. */
  static KubeObject cached(FakeInformerLease cache, KubeObject object) {
    cache.put(object);
    return object;
  }

  /** A parent in {@link #NAMESPACE} that the controller's label selector matches, selecting every input. */
  static KubeObjectBuilder parent(String name) {
    return object(SCHEDULES, NAMESPACE, name).label("managed", "yes");
  }

  /** A parent in {@code namespace} whose {@code spec.selector} selects the inputs labelled {@code team=<team>}. */
  static KubeObjectBuilder parentSelecting(String namespace, String name, String team) {
    return object(SCHEDULES, namespace, name).label("managed", "yes")
        .field("spec", "{\"selector\": {\"matchLabels\": {\"team\": \"" + team + "\"}}}");
  }

  /** A ConfigMap input in {@code namespace} labelled {@code team=<team>}. */
  static KubeObjectBuilder input(String namespace, String name, String team) {
    return object(CONFIG_MAPS, namespace, name).label("team", team);
  }

  /** An output of {@code parent} made from the ConfigMap {@code input}: map-key label, input annotation, owner. */
  static KubeObjectBuilder output(KubeObject parent, KubeObject input, String name) {
    return object(OUTPUTS, parent.namespace(), name).label(MapSync.MAP_KEY_LABEL, input.uid())
        .annotation(MapSync.INPUT_ANNOTATION, "configmaps/" + input.namespace() + "/" + input.name())
        .controlledBy(parent);
  }

  /** The key of one input of one parent, saying where the input is. */
  static MapKey keyOf(KubeObject parent, ApiResource resource, KubeObject input) {
    return new MapKey(parent.namespace(), parent.name(), input.uid(),
        new MapKey.InputRef(resource, input.namespace(), input.name()));
  }

  /** The key of a ConfigMap input of one parent. */
  static MapKey keyOf(KubeObject parent, KubeObject input) {
    return keyOf(parent, CONFIG_MAPS, input);
  }
}
