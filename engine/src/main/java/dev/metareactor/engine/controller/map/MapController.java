package dev.metareactor.engine.controller.map;

import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.MapControllerSpec;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.controller.AbstractHostedController;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChosenHook;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.Wiring;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.host.HostedController.Phase;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One MapController: for every input object a parent selects, the outputs its map hook asks for; and for the
 * outputs of an input that went away, what its tombstone hook keeps. The proposal Metacontroller wrote and never
 * built, hosted like the other two kinds: the same informers, work queue, hook client and apply path. What is its
 * own: the unit of work is one input of one parent ({@link MapKey}), so a parent's inputs are mapped side by side up
 * to {@code --workers} and one input's change maps that input alone; the parent's status is counted by the engine
 * ({@link MapStatus}).
 *
 * <p>The pieces: {@link MapRouter} (events to keys, by index), {@link MapSync} (the kind's part of each sync),
 * {@link MapStatus} (the status, one write per burst). Deleting a parent leaves its outputs to the garbage collector
 * (each carries a ControllerRef to it); a MapController puts no finalizer on parents.
 */
public final class MapController extends AbstractHostedController<MapKey, MapControllerSpec> {

  /** The controller objects' kind. */
  public static final String KIND = MapControllerSpec.KIND;

  /** How the engine hosts MapController objects. */
  public static ControllerKind kind() {
    return new ControllerKind(KIND, "metacontroller.k8s.io/v1alpha1", "mapcontrollers", "map-metacontroller",
        MapController::new);
  }

  /** Set by {@link #wire}, before any event is routed. */
  private volatile @Nullable MapStatus status;

  /**
   * Parses and validates a MapController object.
   *
   * @throws InvalidControllerException naming the field that is wrong
   */
  private MapController(KubeObject object, ControllerContext context) {
    super(object, context, MapControllerSpec::parse);
  }

  @Override
  protected List<ResourceRule> resources() {
    List<ResourceRule> rules = new ArrayList<>();
    rules.add(spec().parent());
    rules.addAll(spec().inputs());
    spec().outputs().forEach(output -> rules.add(output.resource()));
    return rules;
  }

  @Override
  protected ObjectSync<MapKey> wire(Wiring<MapKey> wiring, List<ApiResource> resources) {
    int inputCount = spec().inputs().size();
    SyncedResource parents = new SyncedResource(resources.get(0), wiring.acquireSynced(resources.get(0)),
        parent -> spec().parentSelector().matches(parent.labels()), wiring.finalizers());
    Map<ApiResource, InformerLease> inputs = new LinkedHashMap<>();
    for (ApiResource resource : resources.subList(1, 1 + inputCount)) {
      inputs.put(resource, wiring.acquire(resource));
    }
    List<ChildType> outputs = wiring.childTypes(spec().outputs(),
        resources.subList(1 + inputCount, resources.size()));
    MapSync.Inputs inputCaches = MapSync.Inputs.of(inputs);
    List<ApiResource> inputResources = List.copyOf(inputs.keySet());
    ChosenHook tombstone = wiring.chosenHook("tombstone", ChosenHook.Purpose.TEAR_DOWN);
    ChosenHook map = Objects.requireNonNull(wiring.chosenHook("map", ChosenHook.Purpose.DESIRED_STATE),
        "a MapController's map hook");
    MapSync sync = new MapSync(spec(), parents, inputResources, inputCaches, outputs, map, tombstone,
        parent -> Objects.requireNonNull(status, "made before events are routed").changed(parent));
    status = new MapStatus(KIND + " " + name(), parents, inputResources,
        parent -> inputCounts(sync, parent, inputResources), outputs, context().api(), context().events()::record,
        context().scheduling().work(), context().scheduling().nanoTime(), () -> phase() == Phase.RUNNING);
    wiring.onStop(status::close);
    MapRouter router = new MapRouter(parents, sync::keysOf, sync::inputOf, wiring.queue(), status::changed,
        status::forget);
    wiring.subscribe(parents.informer(), "parent", router::onParentEvent);
    inputs.forEach((resource, informer) ->
        wiring.subscribe(informer, "input", event -> router.onInputEvent(resource, event)));
    for (ChildType type : outputs) {
      wiring.subscribe(type.informer(), "output", router::onOutputEvent);
    }
    return wiring.objectSync(sync, MapSync.SHAPE, wiring.relatedObjects(), ObjectSync.Hooks.NONE);
  }

  /** How many inputs of each input resource {@code parent} selects (what its status counts). */
  static Map<ApiResource, Integer> inputCounts(MapSync sync, KubeObject parent, List<ApiResource> inputs) {
    LabelSelector selector = MapSync.selectorOf(parent, parent.toTree());
    Map<ApiResource, Integer> counts = new LinkedHashMap<>();
    for (ApiResource resource : inputs) {
      counts.put(resource, sync.selected(parent, selector, resource).size());
    }
    return counts;
  }
}
