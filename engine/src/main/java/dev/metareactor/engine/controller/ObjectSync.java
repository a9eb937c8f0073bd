package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * One sync of one object a controller's hooks are about (a CompositeController's parent, a DecoratorController's
 * target), the skeleton every controller kind shares, in upstream's order:
 *
 * <ol>
 *   <li>the object from the informer cache (gone, or not this controller's: done);</li>
 *   <li>the finalizer: added to a selected object that is not being deleted when the controller has a finalize
 *       hook, removed when it has none (which may make the object none of this controller's business);</li>
 *   <li>the hook, chosen once: {@code finalize} when the object is being deleted or no longer selected and the
 *       controller has a finalize hook, else {@code sync};</li>
 *   <li>the objects it owns as the kind observes them ({@link Kind#plan}) and its related objects;</li>
 *   <li>the request {@code {controller, <object>, <owned>, related, finalizing}}, the call, the answer parsed and
 *       checked whole by the kind before anything is written ({@link Plan#answer}: a rolling CompositeController
 *       calls once per ControllerRevision and writes its revisions here);</li>
 *   <li>the owned objects converged ({@link ChildrenManager}), unless the hook said {@code finalized}, or the object
 *       is being deleted and either not held by our finalizer or in the garbage collector's hands; a sync answer
 *       that would delete owned objects by mistake is reported or, under {@code metareactor.dev/delete-guard},
 *       refused before anything is written ({@link DeleteGuard});</li>
 *   <li>the kind's own writes to the object (status, labels...), even when some owned-object writes failed;</li>
 *   <li>when finalizing and the hook answered {@code finalized: true}, the finalizer removed;</li>
 *   <li>then the first failure, if any, fails the sync; else it completes with the hook's resync delay.</li>
 * </ol>
 *
 * <p>Reads come from the informer caches only, so a steady-state sync makes no API request. A conflict (HTTP 409)
 * in the kind's writes is passed through as it is, so the queue syncs the object again without an Event.
 *
 * @param <K> the keys of the synced objects in the controller's work queue
 */
public final class ObjectSync<K extends SyncKey> {

  private static final Logger LOG = LoggerFactory.getLogger(ObjectSync.class);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** What a controller kind brings to the sync. */
  public interface Kind<K extends SyncKey> {

    /** The resources whose objects the controller syncs. */
    List<SyncedResource> resources();

    /** The synced resource {@code key} is of; empty for a key of none (a resource no longer targeted). */
    Optional<SyncedResource> resourceOf(K key);

    /**
     * The keys a periodic resync enqueues for {@code object}, of {@code type}: its own key, or (MapController) one
     * per unit of work about it.
     */
    List<K> keysOf(SyncedResource type, KubeObject object);

    /**
     * The kind's part of one sync of {@code key}, about {@code object}, whose tree (sent to the hook) is
     * {@code json}.
     */
    Plan plan(K key, SyncedObject object, ObjectNode json);
  }

  /**
   * The names in a kind's requests and answers.
   *
   * @param objectField the request's field for the synced object ({@code parent}, {@code object})
   * @param ownedField the request's and answer's field for owned objects ({@code children}, {@code attachments})
   * @param otherAnswerFields the answer's fields the kind reads itself, beyond {@code status}, the owned field,
   *     {@code resyncAfterSeconds} and {@code finalized}
   * @param finalizable whether requests carry {@code related} and {@code finalizing}: the kinds with customize and
   *     finalize hooks
   */
  public record Shape(String objectField, String ownedField, Set<String> otherAnswerFields, boolean finalizable) {
    public Shape {
      Objects.requireNonNull(objectField, "objectField");
      Objects.requireNonNull(ownedField, "ownedField");
      otherAnswerFields = Set.copyOf(otherAnswerFields);
    }
  }

  /** The kind's part of one sync. */
  public interface Plan {

    /** The objects the synced object owns, as its hook sees them; an entry for every declared type. */
    Mono<Map<ChildType, List<KubeObject>>> owned();

    /** The hook this sync calls instead of {@code chosen}, the one the synced object's state chose. */
    default @Nullable ChosenHook hook(@Nullable ChosenHook chosen) {
      return chosen;
    }

    /** Adds the kind's own fields to the request (a MapController's {@code mapKey} and {@code input}). */
    default void complete(ObjectNode request) {}

    /** What the call is about for the hook client's ETag cache: the synced object, or a part of it. */
    default HookCaller.RootObject root(HookCaller.RootObject synced) {
      return synced;
    }

    /**
     * Checks the whole answer before anything is written.
     *
     * @throws dev.metareactor.engine.hook.HookResponseException naming what is wrong
     */
    Answer check(SyncResponse response, JsonNode body);

    /**
     * Calls the hook and checks its answer whole before anything is written: by default one call with the request
     * as built, checked by {@link #check}. A kind may call it more than once and combine the answers (a rolling
     * CompositeController calls it once per ControllerRevision), and may write here what must be written before the
     * owned objects (those revisions).
     *
     * @param observed the owned objects, as the request carries them
     */
    default Mono<Checked> answer(HookCall hook, Map<ChildType, List<KubeObject>> observed) {
      return hook.call().map(reply -> new Checked(reply.response(), check(reply.response(), reply.body())));
    }
  }

  /** A call of the chosen hook with the request the sync built (the synced object, its owned and related objects). */
  public interface HookCall {

    /** Calls the hook with the request as built; the answer parsed. */
    Mono<Reply> call();

    /**
     * Calls it with {@code object} in the synced object's place (the parent as an older ControllerRevision recorded
     * it); {@code variant} names that version of the object, and keeps its ETag cache entry apart.
     */
    Mono<Reply> call(ObjectNode object, String variant);

    /**
     * Refuses, under the controller's {@code metareactor.dev/delete-guard}, an answer of {@link #call()} whose
     * desired owned objects would delete observed ones by mistake ({@link DeleteGuard#check}). The sync checks the
     * answer it converges itself; a kind calls this only when it writes something before that (a rolling
     * CompositeController's revisions), so that a refused answer writes nothing.
     *
     * @param desired the owned objects the answer asks for, as checked by the kind
     * @throws dev.metareactor.engine.hook.HookResponseException naming the rule and the counts
     */
    void checkDeletions(SyncResponse answer, List<DesiredChild> desired);
  }

  /** A parsed answer and the body it was parsed from. */
  public record Reply(SyncResponse response, JsonNode body) {}

  /**
   * An answer checked by the kind, with the response the sync follows for {@code resyncAfterSeconds} and
   * {@code finalized}.
   */
  public record Checked(SyncResponse response, Answer answer) {}

  /**
   * An answer checked by the kind.
   *
   * @param desired the owned objects to converge to
   * @param keptAsTheyAre the UIDs of owned objects to leave exactly as they are, whatever {@code desired} says (a
   *     tombstone hook's answer: detached outputs it keeps)
   * @param ownWrites the kind's writes to the synced object; completes with whether it is still the object synced
   *     (not gone, not replaced by a namesake), so that the finalizer may be removed from it
   */
  public record Answer(List<DesiredChild> desired, Set<String> keptAsTheyAre, Supplier<Mono<Boolean>> ownWrites) {
    public Answer {
      desired = List.copyOf(desired);
      keptAsTheyAre = Set.copyOf(keptAsTheyAre);
      Objects.requireNonNull(ownWrites, "ownWrites");
    }

    /** The owned objects converged to {@code desired}, then the kind's writes. */
    public Answer(List<DesiredChild> desired, Supplier<Mono<Boolean>> ownWrites) {
      this(desired, Set.of(), ownWrites);
    }
  }

  /**
   * The hooks the sync may call; either may be absent.
   *
   * @param syncHook the sync hook, or {@code null}
   * @param finalizeHook the finalize hook, or {@code null}
   */
  public record Hooks(@Nullable ChosenHook syncHook, @Nullable ChosenHook finalizeHook) {}

  private final Kind<K> kind;
  private final Shape shape;
  private final String controller;
  private final JsonNode controllerObject;
  private final Hooks hooks;
  private final RelatedObjects<K> related;
  private final ChildrenManager owned;
  private final Finalizers finalizers;
  private final ParentEvents events;
  private final Placement placement;
  private final DeleteGuard deleteGuard;
  /** What this controller's syncs created that the caches may not show yet. */
  private final WrittenChildren written = new WrittenChildren();

  /**
   * Where a synced object belongs (with {@code --sharding}): a move to the replica that owns it, instead of a sync,
   * when that is another one.
   */
  @FunctionalInterface
  public interface Placement {

    /** Every object is synced here. */
    Placement HERE = object -> Optional.empty();

    /**
     * The move of {@code object} to the replica that owns it, or empty when this one does; a failure when this one
     * may not sync it yet (its caches lack what moved with it).
     */
    Optional<Mono<Void>> elsewhere(SyncedObject object);
  }

  /**
   * @param controller {@code <Kind> <name>} of the controller, for messages
   * @param controllerObject the controller object, sent in every request; its {@link DeleteGuardAnnotation} says
   *     whether answers that would delete owned objects by mistake are refused
   * @param events where the Events a hook's answer asks for go, and the engine's own about the sync
   * @throws dev.metareactor.engine.api.InvalidControllerException when the annotation is invalid
   */
  public ObjectSync(Kind<K> kind, Shape shape, String controller, JsonNode controllerObject, Hooks hooks,
      RelatedObjects<K> related, ChildrenManager owned, Finalizers finalizers, ParentEvents events) {
    this(kind, shape, controller, controllerObject, hooks, related, owned, finalizers, events, Placement.HERE);
  }

  /** @param placement moves an object that another replica owns (with {@code --sharding}) instead of syncing it */
  public ObjectSync(Kind<K> kind, Shape shape, String controller, JsonNode controllerObject, Hooks hooks,
      RelatedObjects<K> related, ChildrenManager owned, Finalizers finalizers, ParentEvents events,
      Placement placement) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.shape = Objects.requireNonNull(shape, "shape");
    this.controller = Objects.requireNonNull(controller, "controller");
    this.controllerObject = Objects.requireNonNull(controllerObject, "controllerObject");
    this.hooks = Objects.requireNonNull(hooks, "hooks");
    this.related = Objects.requireNonNull(related, "related");
    this.owned = Objects.requireNonNull(owned, "owned");
    this.finalizers = Objects.requireNonNull(finalizers, "finalizers");
    this.events = Objects.requireNonNull(events, "events");
    this.placement = Objects.requireNonNull(placement, "placement");
    this.deleteGuard = new DeleteGuard(DeleteGuardAnnotation.enabled(annotationsOf(controllerObject)), controller,
        shape.ownedField(), events);
  }

  private static Map<String, String> annotationsOf(JsonNode object) {
    return object instanceof ObjectNode tree ? KubeObject.of(tree).annotations() : Map.of();
  }

  /**
   * Syncs the object.
   *
   * @return when to sync again regardless of events (empty for never); fails when the hook failed or answered
   *     garbage, or a write failed
   */
  public Mono<Optional<Duration>> sync(K key) {
    Optional<SyncedObject> found = kind.resourceOf(key)
        .flatMap(type -> SyncedObject.find(type, key.namespace(), key.name()));
    if (found.isEmpty()) {
      return Mono.just(Optional.empty());
    }
    SyncedObject object = found.get();
    Optional<Mono<Void>> move = placement.elsewhere(object);
    if (move.isPresent()) {
      return move.get().thenReturn(Optional.empty());
    }
    return syncFinalizer(object)
        .map(object::as)
        // removing our finalizer may have made it none of our business
        .filter(current -> current.type().responsibleFor(current.object()))
        .flatMap(current -> syncObject(key, current))
        .defaultIfEmpty(Optional.empty());
  }

  /** The object {@code key} names as cached, responsible or not (for the Event of a failed sync). */
  public Optional<KubeObject> cached(K key) {
    return kind.resourceOf(key).flatMap(type -> type.informer().get(key.namespace(), key.name()));
  }

  /** The keys of every cached object the controller is responsible for (a periodic resync). */
  public List<K> responsibleKeys() {
    return keysOf(object -> true);
  }

  /** The keys of the cached objects the controller is responsible for that {@code which} accepts. */
  public List<K> keysOf(Predicate<KubeObject> which) {
    List<K> keys = new ArrayList<>();
    for (SyncedResource type : kind.resources()) {
      for (KubeObject object : type.informer().list()) {
        if (type.responsibleFor(object) && which.test(object)) {
          keys.addAll(kind.keysOf(type, object));
        }
      }
    }
    return keys;
  }

  /** How many cached objects the controller is responsible for. */
  public int responsibleCount() {
    int count = 0;
    for (SyncedResource type : kind.resources()) {
      for (KubeObject object : type.informer().list()) {
        if (type.responsibleFor(object)) {
          count++;
        }
      }
    }
    return count;
  }

  /** The resources whose objects the controller syncs. */
  public List<SyncedResource> syncedResources() {
    return kind.resources();
  }

  /** Every cached object that carries the controller's finalizer (for retiring). */
  public List<SyncedObject> withFinalizer() {
    List<SyncedObject> objects = new ArrayList<>();
    for (SyncedResource type : kind.resources()) {
      type.informer().list().stream().filter(finalizers::presentOn)
          .forEach(object -> objects.add(new SyncedObject(type, object)));
    }
    return objects;
  }

  private Mono<KubeObject> syncFinalizer(SyncedObject synced) {
    KubeObject object = synced.object();
    if (hooks.finalizeHook() == null) {
      return finalizers.remove(synced.resource(), object);
    }
    if (!object.deleting() && synced.type().selects(object)) {
      return finalizers.add(synced.resource(), object);
    }
    return Mono.just(object);
  }

  private Mono<Optional<Duration>> syncObject(K key, SyncedObject synced) {
    KubeObject object = synced.object();
    boolean finalize = hooks.finalizeHook() != null && (object.deleting() || !synced.type().selects(object));
    ObjectNode json = object.toTree();
    Plan plan = kind.plan(key, synced, json);
    ChosenHook hook = plan.hook(finalize ? hooks.finalizeHook() : hooks.syncHook());
    if (hook == null) {
      return Mono.error(new IllegalStateException("sync hook not defined for " + controller));
    }
    HookCaller.RootObject root = plan.root(new HookCaller.RootObject(object.kind(), object.namespace(),
        object.name()));
    String uid = object.storedUid();
    // Only a sync (or map) answer about an object that is not being deleted is held to the delete rules: a finalize
    // or tombstone answer tears down, deleting is what it is for; a sync of an object being deleted deletes nothing.
    boolean guarded = hook == hooks.syncHook() && !object.deleting();
    return plan.owned()
        .map(cached -> written.observedWith(key, uid, cached))
        .zipWhen(observed -> related.of(key, object, json, synced.resource(), hook.version()))
        .flatMap(observedAndRelated -> {
          Map<ChildType, List<KubeObject>> observed = observedAndRelated.getT1();
          ObjectNode relatedObjects = observedAndRelated.getT2();
          HookCall call = new HookCall() {
            @Override
            public Mono<Reply> call() {
              return invoke(request(synced, json, observed, relatedObjects, hook, plan), hook, root);
            }

            @Override
            public Mono<Reply> call(ObjectNode variantJson, String variant) {
              return invoke(request(synced, variantJson, observed, relatedObjects, hook, plan), hook,
                  new HookCaller.RootObject(root.kind(), root.namespace(), root.name() + "@" + variant));
            }

            @Override
            public void checkDeletions(SyncResponse answer, List<DesiredChild> desired) {
              if (guarded) {
                deleteGuard.check(answer, observed, desired);
              }
            }
          };
          return plan.answer(call, observed)
              .flatMap(checked -> converge(key, synced, observed, checked, hook, guarded,
                  written.recorder(key, uid)));
        });
  }

  private Mono<Reply> invoke(ObjectNode request, ChosenHook hook, HookCaller.RootObject root) {
    return hook.caller().call(request, root)
        .map(body -> new Reply(SyncResponse.parse(body, shape.ownedField(), shape.otherAnswerFields(),
            hook.unknownFields(), field -> LOG.debug("{}: {} hook answered unknown field {} for {}", controller,
                hook.name(), field, root)), body));
  }

  private ObjectNode request(SyncedObject synced, ObjectNode json, Map<ChildType, List<KubeObject>> observed,
      ObjectNode relatedObjects, ChosenHook hook, Plan plan) {
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set(shape.objectField(), json);
    plan.complete(request);
    ObjectNode map = request.putObject(shape.ownedField());
    boolean namespaced = synced.resource().namespaced();
    observed.forEach((type, objects) -> {
      ObjectNode group = map.putObject(ObjectMapKeys.groupKey(type.resource().kind(), type.resource().apiVersion()));
      for (KubeObject child : objects) {
        // Observed objects go out as they came: the request is only written, so nothing parses them.
        group.putRawValue(ObjectMapKeys.objectKey(hook.version(), namespaced, child.namespace(), child.name()),
            child.raw());
      }
    });
    if (shape.finalizable()) {
      request.set("related", relatedObjects);
      request.put("finalizing", hook.finalizing());
    }
    return request;
  }

  /** @param guarded whether the answer is held to the delete rules ({@link DeleteGuard}) */
  private Mono<Optional<Duration>> converge(K key, SyncedObject synced, Map<ChildType, List<KubeObject>> observed,
      Checked checked, ChosenHook hook, boolean guarded, WrittenChildren.Recorder recorder) {
    KubeObject object = synced.object();
    SyncResponse response = checked.response();
    Answer answer = checked.answer();
    boolean finalized = hook.finalizing() && response.finalized();
    boolean manage = !finalized
        && (!object.deleting() || (hooks.finalizeHook() != null && finalizers.mayManageChildrenWhileDeleting(object)));
    Map<ChildType, List<KubeObject>> converging = without(observed, answer.keptAsTheyAre());
    if (manage && guarded) {
      try {
        deleteGuard.check(response, converging, answer.desired());
      } catch (HookResponseException e) {
        return Mono.error(e);
      }
      deleteGuard.reportMissing(object, key.about(), response, converging);
    }
    response.events().forEach(event -> events.record(object,
        event.warning() ? EventRecorder.Type.Warning : EventRecorder.Type.Normal, event.reason(), event.message()));
    Mono<Void> converged = manage ? owned.manage(object, converging, answer.desired(), recorder) : Mono.empty();
    // The kind's own writes happen even when some owned-object writes failed, as upstream does; that failure is
    // reported after them.
    return converged.materialize()
        .flatMap(ownedSignal -> answer.ownWrites().get()
            .flatMap(stillThere -> finalized && stillThere
                ? finalizers.remove(synced.resource(), synced.latest()).then()
                : Mono.<Void>empty())
            .then(Mono.justOrEmpty(ownedSignal.getThrowable()).flatMap(Mono::error)))
        .then(Mono.just(Optional.ofNullable(response.resyncAfter())));
  }

  private static Map<ChildType, List<KubeObject>> without(Map<ChildType, List<KubeObject>> observed,
      Set<String> uids) {
    if (uids.isEmpty()) {
      return observed;
    }
    Map<ChildType, List<KubeObject>> rest = new LinkedHashMap<>();
    observed.forEach((type, objects) ->
        rest.put(type, objects.stream().filter(object -> !uids.contains(object.uid())).toList()));
    return rest;
  }

  /**
   * The hook a sync calls, carried as one value.
   *
   * @param name {@code sync} or {@code finalize}
   * @param caller calls it
   * @param spec its spec (version and {@code responseUnMarshallMode})
   */
  public record ChosenHook(String name, HookCaller caller, HookSpec spec) {

    public ChosenHook {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(caller, "caller");
      Objects.requireNonNull(spec, "spec");
    }

    public HookSpec.HookVersion version() {
      return spec.version();
    }

    public SyncResponse.UnknownFields unknownFields() {
      return SyncResponse.UnknownFields.of(spec);
    }

    public boolean finalizing() {
      return name.equals("finalize");
    }
  }
}
