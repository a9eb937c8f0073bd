package dev.metareactor.engine.controller.map;

import dev.metareactor.engine.api.MapControllerSpec;
import dev.metareactor.engine.controller.Answer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChosenHook;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.Kind;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.Plan;
import dev.metareactor.engine.controller.SyncedObject;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a MapController brings to the sync of one input of one parent ({@link ObjectSync} runs the rest):
 *
 * <ul>
 *   <li>the input, found where its key says and checked: same UID, not being deleted, in the parent's namespace
 *       (unless the parent or the input resource is cluster-scoped), labels matching the parent's duck-typed
 *       {@code spec.selector} (absent or empty: everything), and not controlled by the parent itself;</li>
 *   <li>its outputs: the parent's objects of the output types labelled with the input's mapKey, found through the
 *       informers' label index;</li>
 *   <li>an input that is there: the {@code map} hook with {@code {controller, parent, mapKey, input, outputs}}; its
 *       outputs are checked (declared types, the parent's namespace, no duplicates), labelled with the mapKey,
 *       annotated with the input's name and converged within the group;</li>
 *   <li>an input that is gone or no longer selected (its outputs are detached): the {@code tombstone} hook with
 *       {@code {controller, parent, mapKey, outputs}}, whose {@code outputs} are those to keep as they are; the
 *       others are deleted. Without a tombstone hook, or with no outputs left, nothing is called and every detached
 *       output is deleted;</li>
 *   <li>its own write: none per input; the parent's status is counted and written by {@link MapStatus}, once per
 *       burst.</li>
 * </ul>
 */
final class MapSync implements Kind<MapKey> {

  /** On every output: the UID of the input it was made from. */
  static final String MAP_KEY_LABEL = "metacontroller.k8s.io/map-key";
  /** On every output: which input it was made from, for people ({@link MapKey.InputRef#toString()}). */
  static final String INPUT_ANNOTATION = "metacontroller.k8s.io/map-input";

  /** A MapController's requests and answers: {@code parent}, {@code outputs}; no related objects, no finalizing. */
  static final ObjectSync.Shape SHAPE = new ObjectSync.Shape("parent", "outputs", Set.of(), false);

  private final SyncedResource parents;
  private final List<ApiResource> inputs;
  private final Inputs inputCaches;
  private final List<ChildType> outputs;
  private final ChosenHook map;
  private final @Nullable ChosenHook tombstone;
  private final Consumer<ParentKey> statusChanged;
  private final DesiredObjects desiredObjects;

  /** The input informers, by resource. */
  interface Inputs {
    Optional<KubeObject> get(ApiResource resource, String namespace, String name);

    List<KubeObject> candidates(ApiResource resource, LabelSelector selector, String namespace);

    /** The inputs as {@code informers}, one for each input resource, cache them. */
    static Inputs of(Map<ApiResource, ? extends InformerLease> informers) {
      return new Inputs() {
        @Override
        public Optional<KubeObject> get(ApiResource resource, String namespace, String name) {
          return informer(resource).get(namespace, name);
        }

        @Override
        public List<KubeObject> candidates(ApiResource resource, LabelSelector selector, String namespace) {
          return informer(resource).candidates(selector, namespace);
        }

        private InformerLease informer(ApiResource resource) {
          return Objects.requireNonNull(informers.get(resource), "one of the controller's input resources");
        }
      };
    }
  }

  /**
   * @param map the map hook, called for an input that is there
   * @param tombstone the tombstone hook, or {@code null} when the controller has none
   * @param statusChanged told after each sync that the parent's status may need counting again
   */
  MapSync(MapControllerSpec spec, SyncedResource parents, List<ApiResource> inputs, Inputs inputCaches,
      List<ChildType> outputs, ChosenHook map, @Nullable ChosenHook tombstone, Consumer<ParentKey> statusChanged) {
    this.parents = Objects.requireNonNull(parents, "parents");
    this.inputs = List.copyOf(inputs);
    this.inputCaches = Objects.requireNonNull(inputCaches, "inputCaches");
    this.outputs = List.copyOf(outputs);
    this.map = Objects.requireNonNull(map, "map");
    this.tombstone = tombstone;
    this.statusChanged = Objects.requireNonNull(statusChanged, "statusChanged");
    this.desiredObjects = new DesiredObjects("outputs", "parent",
        "spec.outputResources of " + MapControllerSpec.KIND + " " + spec.name());
  }

  @Override
  public List<SyncedResource> resources() {
    return List.of(parents);
  }

  @Override
  public Optional<SyncedResource> resourceOf(MapKey key) {
    return Optional.of(parents);
  }

  /** Every input of the parent, selected or with outputs still there (a resync maps them all again). */
  @Override
  public List<MapKey> keysOf(SyncedResource type, KubeObject parent) {
    return keysOf(parent);
  }

  List<MapKey> keysOf(KubeObject parent) {
    ParentKey owner = MapRouter.keyOf(parents.resource(), parent);
    Map<String, MapKey> keys = new LinkedHashMap<>();
    LabelSelector selector = selectorOf(parent, parent.toTree());
    for (ApiResource resource : inputs) {
      for (KubeObject input : selected(parent, selector, resource)) {
        keys.put(input.storedUid(), new MapKey(owner.namespace(), owner.name(), input.storedUid(),
            new MapKey.InputRef(resource, input.namespace(), input.name())));
      }
    }
    for (ChildType type : outputs) {
      for (KubeObject output : type.informer().controlledBy(parent.storedUid())) {
        String mapKey = output.labels().get(MAP_KEY_LABEL);
        if (mapKey != null && !keys.containsKey(mapKey)) {
          keys.put(mapKey, new MapKey(owner.namespace(), owner.name(), mapKey, inputOf(output)));
        }
      }
    }
    return new ArrayList<>(keys.values());
  }

  /** The inputs of {@code resource} the parent selects. */
  List<KubeObject> selected(KubeObject parent, LabelSelector selector, ApiResource resource) {
    String namespace = parents.resource().namespaced() && resource.namespaced() ? parent.namespace() : "";
    return inputCaches.candidates(resource, selector, namespace).stream()
        .filter(input -> selects(parent, selector, resource, input)).toList();
  }

  /**
   * The parent's duck-typed {@code spec.selector} ({@code json} is its tree); absent or empty selects everything.
   *
   * @throws IllegalArgumentException naming the parent when it is not a label selector
   */
  static LabelSelector selectorOf(KubeObject parent, ObjectNode json) {
    JsonNode selector = json.path("spec").get("selector");
    try {
      return LabelSelector.fromApi(selector == null || selector.isNull() ? null : selector);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("spec.selector of " + parent.describe() + ": " + e.getMessage(), e);
    }
  }

  private boolean selects(KubeObject parent, LabelSelector selector, ApiResource resource, KubeObject input) {
    return !input.deleting()
        && (!parents.resource().namespaced() || !resource.namespaced() || input.namespace().equals(parent.namespace()))
        && selector.matches(input.labels())
        && (input.controller() == null || !parent.storedUid().equals(input.controller().uid()));
  }

  /** Where the input of an output is, from the annotation it carries; {@code null} when it does not say. */
  MapKey.@Nullable InputRef inputOf(KubeObject output) {
    String named = output.annotations().get(INPUT_ANNOTATION);
    if (named == null) {
      return null;
    }
    String[] parts = named.split("/");
    for (ApiResource resource : inputs) {
      String resourceName = MapKey.InputRef.nameOf(resource);
      if (parts[0].equals(resourceName)) {
        if (resource.namespaced() && parts.length == 3) {
          return new MapKey.InputRef(resource, parts[1], parts[2]);
        }
        if (!resource.namespaced() && parts.length == 2) {
          return new MapKey.InputRef(resource, "", parts[1]);
        }
      }
    }
    return null;
  }

  /**
   * The map hook for an input that is there; for one that is gone, the tombstone hook, or nothing to ask (and no
   * output kept) without one or without outputs left.
   */
  @Override
  public Plan plan(MapKey key, SyncedObject synced, ObjectNode json) {
    KubeObject parent = synced.object();
    Optional<KubeObject> input = input(key, parent, selectorOf(parent, json));
    Map<ChildType, List<KubeObject>> group = group(parent, key.mapKey());
    ParentKey owner = new ParentKey(key.namespace(), key.name());
    ChosenHook hook = input.isPresent() ? map : group.values().stream().allMatch(List::isEmpty) ? null : tombstone;
    if (hook == null) {
      // Gone, and no tombstone hook or no outputs left to ask it about: every output goes.
      return new Plan.KeepNothing(Mono.just(group), () -> changed(owner));
    }
    ObjectNode fields = KubeJson.nodes().objectNode().put("mapKey", key.mapKey());
    input.ifPresent(object -> fields.putRawValue("input", object.raw()));
    Plan.Call call = Plan.call(synced, Mono.just(group), Plan.Answering.checkedBy((response, body) -> {
      if (input.isEmpty()) {
        return new Answer(List.of(), kept(group, response.children()), () -> changed(owner));
      }
      MapKey.InputRef where = new MapKey.InputRef(
          Objects.requireNonNull(key.input(), "an input was found where the key says").resource(),
          input.get().namespace(), input.get().name());
      List<DesiredChild> desired = desiredObjects.check(response.children(), outputs, parent, synced.resource(),
          (metadata, description) -> {
            desiredObjects.setEngineKey(metadata, "labels", MAP_KEY_LABEL, key.mapKey(), description);
            desiredObjects.setEngineKey(metadata, "annotations", INPUT_ANNOTATION, where.toString(), description);
          });
      return new Answer(desired, () -> changed(owner));
    }));
    HookCaller.RootObject parentRoot = call.root();
    // One ETag cache entry per input, not one per parent shared by all of them.
    return call.calling(hook)
        .about(new HookCaller.RootObject(parentRoot.kind(), parentRoot.namespace(),
            parentRoot.name() + "/" + key.mapKey()))
        .with(fields);
  }

  private Mono<Boolean> changed(ParentKey parent) {
    statusChanged.accept(parent);
    return Mono.just(true);
  }

  /** The input the key names, if it is still that input and the parent selects it. */
  private Optional<KubeObject> input(MapKey key, KubeObject parent, LabelSelector selector) {
    if (key.input() == null) {
      return Optional.empty();
    }
    ApiResource resource = key.input().resource();
    return inputCaches.get(resource, key.input().namespace(), key.input().name())
        .filter(input -> key.mapKey().equals(input.uid()))
        .filter(input -> selects(parent, selector, resource, input));
  }

  /** The parent's outputs made from one input, by type (an entry for every type). */
  private Map<ChildType, List<KubeObject>> group(KubeObject parent, String mapKey) {
    Map<ChildType, List<KubeObject>> group = new LinkedHashMap<>();
    for (ChildType type : outputs) {
      group.put(type, type.informer().labelled(MAP_KEY_LABEL, mapKey).stream()
          .filter(output -> output.controller() != null && parent.storedUid().equals(output.controller().uid()))
          .toList());
    }
    return group;
  }

  /** The UIDs of the detached outputs the tombstone hook's answer lists (by apiVersion, kind and name). */
  private static Set<String> kept(Map<ChildType, List<KubeObject>> group, List<ObjectNode> listed) {
    Set<String> names = new HashSet<>();
    for (ObjectNode output : listed) {
      names.add(output.get("apiVersion").stringValue() + " " + output.get("kind").stringValue() + " "
          + output.get("metadata").get("name").stringValue());
    }
    Set<String> kept = new LinkedHashSet<>();
    group.forEach((type, objects) -> objects.stream()
        .filter(object -> names.contains(type.resource().apiVersion() + " " + type.resource().kind() + " "
            + object.name()))
        .forEach(object -> kept.add(object.uid())));
    return kept;
  }
}
