package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.DeleteGuardAnnotation;
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
import java.util.concurrent.CopyOnWriteArrayList;
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
 *       hook or its objects may own objects in other namespaces ({@link Kind#ownsInOtherNamespaces}), removed when
 *       neither (which may make the object none of this controller's business);</li>
 *   <li>the kind's {@link Plan} ({@link Kind#plan}), and from it the hook, chosen once: the one the plan names
 *       (a MapController's {@code map} or {@code tombstone}), else {@code finalize} when the object is being deleted
 *       or no longer selected and the controller has a finalize hook, else {@code sync}; or none, when the plan
 *       keeps nothing ({@link Plan.KeepNothing}: no call, every owned object deleted as below);</li>
 *   <li>the objects it owns as the plan observes them, and its related objects; an object being deleted or no
 *       longer selected that our finalizer holds only for its objects in other namespaces (no finalize hook) gets
 *       no call: those are deleted, then the finalizer removed;</li>
 *   <li>the request {@code {controller, <object>, <kind's fields>, <owned>, related, finalizing}}, the call, the
 *       answer parsed and checked whole by the kind before anything is written ({@link Plan.Answering}: a rolling
 *       CompositeController calls once per ControllerRevision and writes its revisions here);</li>
 *   <li>the owned objects converged ({@link ChildrenManager}), unless the hook said {@code finalized}, or the object
 *       is being deleted and either not held by our finalizer or in the garbage collector's hands; a sync answer
 *       that would delete owned objects by mistake is reported or, under {@code metareactor.dev/delete-guard},
 *       refused before anything is written ({@link DeleteGuard});</li>
 *   <li>the kind's own writes to the object (status, labels...), even when some owned-object writes failed;</li>
 *   <li>when the finalize hook ({@link ChosenHook.Purpose#FINALIZE}) answered {@code finalized: true}, the owned
 *       objects in other namespaces deleted (the garbage collector does not), then the finalizer removed;</li>
 *   <li>the kind's last write ({@link Answer#last}: a CompositeController's {@code deleteParent}), only when every
 *       write before it succeeded;</li>
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
  /** What {@link Plan.KeepNothing} converges as: no Events, no resync, not finalized. */
  private static final SyncResponse NO_ANSWER = new SyncResponse(null, List.of(), null, false, List.of());

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

  /**
   * The hooks the synced object's state chooses from ({@link Plan#call}); either may be absent.
   *
   * @param syncHook the sync hook, or {@code null}
   * @param finalizeHook the finalize hook, or {@code null}: then the controller puts no finalizer on objects (and
   *     removes its own)
   */
  public record Hooks(@Nullable ChosenHook syncHook, @Nullable ChosenHook finalizeHook) {

    /** No hook chosen by state: a kind whose plans name their hooks (MapController). */
    public static final Hooks NONE = new Hooks(null, null);

    public Hooks {
      if (syncHook != null && syncHook.purpose() != ChosenHook.Purpose.DESIRED_STATE) {
        throw new IllegalArgumentException("the sync hook says the desired state, not " + syncHook.purpose());
      }
      if (finalizeHook != null && !finalizeHook.finalizing()) {
        throw new IllegalArgumentException("the finalize hook finalizes, not " + finalizeHook.purpose());
      }
    }
  }

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
  private final HotLoopGuard hotLoops;
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
    this(kind, shape, controller, controllerObject, hooks, related, owned, finalizers, events, placement,
        HotLoopGuard.off());
  }

  /** @param hotLoops finds the parents whose syncs go round in a loop, and holds them back */
  public ObjectSync(Kind<K> kind, Shape shape, String controller, JsonNode controllerObject, Hooks hooks,
      RelatedObjects<K> related, ChildrenManager owned, Finalizers finalizers, ParentEvents events,
      Placement placement, HotLoopGuard hotLoops) {
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
    this.hotLoops = Objects.requireNonNull(hotLoops, "hotLoops");
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
      hotLoops.forget(key);
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

  /**
   * How long the syncs of {@code key} are still held back because they went round in a loop ({@link HotLoopGuard}),
   * or empty when they are not.
   *
   * @param changed whether the object itself changed since (its spec, or a sync was asked for): that lifts the hold,
   *     as the loop may be fixed
   */
  public Optional<Duration> heldBack(K key, boolean changed) {
    if (changed) {
      hotLoops.release(key);
      return Optional.empty();
    }
    return hotLoops.held(key);
  }

  /** The request's and answer's field names of the kind. */
  public Shape shape() {
    return shape;
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
    if (hooks.finalizeHook() == null && !kind.ownsInOtherNamespaces()) {
      return finalizers.remove(synced.resource(), object);
    }
    if (!object.deleting() && synced.type().selects(object)) {
      return finalizers.add(synced.resource(), object);
    }
    return Mono.just(object);
  }

  private Mono<Optional<Duration>> syncObject(K key, SyncedObject synced) {
    KubeObject object = synced.object();
    ObjectNode json = object.toTree();
    String uid = object.storedUid();
    Plan plan = kind.plan(key, synced, json);
    Mono<Map<ChildType, List<KubeObject>>> observed =
        plan.owned().map(cached -> written.observedWith(key, uid, cached));
    if (hooks.finalizeHook() == null && kind.ownsInOtherNamespaces()
        && (object.deleting() || !synced.type().selects(object))) {
      // Held by our finalizer only for the owned objects in other namespaces, which no garbage collector deletes:
      // no hook to ask; they are deleted, then the finalizer goes.
      WrittenChildren.Recorder recorder = written.recorder(key, uid);
      return observed.flatMap(owned -> deleteInOtherNamespaces(object, owned, recorder))
          .flatMap(allGone -> allGone ? finalizers.remove(synced.resource(), synced.latest()).then()
              : Mono.<Void>empty())
          .thenReturn(Optional.empty());
    }
    if (plan instanceof Plan.KeepNothing nothing) {
      // No hook to ask, nothing to show one: converged as to an answer that keeps nothing and says nothing else.
      Answer.Checked keepNothing = new Answer.Checked(NO_ANSWER, new Answer(List.of(), nothing.ownWrites()));
      return observed.flatMap(owned -> converge(key, synced, owned, keepNothing, false, false,
          written.recorder(key, uid)));
    }
    Plan.Call planned = (Plan.Call) plan;
    boolean finalize = hooks.finalizeHook() != null && (object.deleting() || !synced.type().selects(object));
    ChosenHook hook = planned.hook() != null ? planned.hook() : finalize ? hooks.finalizeHook() : hooks.syncHook();
    if (hook == null) {
      return Mono.error(new IllegalStateException("sync hook not defined for " + controller));
    }
    HookCaller.RootObject root = planned.root();
    // Only an answer of the desired state about an object that is not being deleted is held to the delete rules: a
    // finalize or tombstone answer tears down, deleting is what it is for; a sync of an object being deleted deletes
    // nothing.
    boolean guarded = hook.purpose() == ChosenHook.Purpose.DESIRED_STATE && !object.deleting();
    return observed
        .zipWhen(owned -> related.of(key, object, json, synced.resource(), hook.version()))
        .flatMap(observedAndRelated -> {
          Map<ChildType, List<KubeObject>> owned = observedAndRelated.getT1();
          ObjectNode relatedObjects = observedAndRelated.getT2();
          // With a shadow hook, what the real hook was asked and answered, for the shadow to be asked the same.
          List<Shadow.Exchange> exchanges = hook.shadow() == null ? List.of() : new CopyOnWriteArrayList<>();
          HookCall hookCall = new HookCall() {
            @Override
            public Mono<HookCall.Reply> call() {
              return exchange(request(synced, json, owned, relatedObjects, hook, planned.fields()), root);
            }

            @Override
            public Mono<HookCall.Reply> call(ObjectNode variantJson, String variant) {
              return exchange(request(synced, variantJson, owned, relatedObjects, hook, planned.fields()),
                  new HookCaller.RootObject(root.kind(), root.namespace(), root.name() + "@" + variant));
            }

            private Mono<HookCall.Reply> exchange(ObjectNode request, HookCaller.RootObject about) {
              return Mono.deferContextual(context -> {
                SyncRecord record = SyncRecord.of(context);
                Mono<HookCall.Reply> reply = invoke(request, hook, about);
                if (record != null) {
                  long start = System.nanoTime();
                  // Timed as the answer or the failure arrives: what runs downstream of it is the rest of the sync.
                  reply = reply.doOnNext(answer -> record.exchange(request, answer.body()))
                      .doOnSuccess(answer -> record.hookCall(System.nanoTime() - start))
                      .doOnError(error -> record.hookCall(System.nanoTime() - start));
                }
                return hook.shadow() == null ? reply
                    : reply.doOnNext(answer -> exchanges.add(new Shadow.Exchange(request, about, answer)));
              });
            }

            @Override
            public void checkDeletions(SyncResponse answer, List<DesiredChild> desired) {
              if (guarded) {
                deleteGuard.check(answer, owned, desired);
              }
            }
          };
          return planned.answering().answer(hookCall, owned)
              .doOnNext(checked -> {
                Shadow shadow = hook.shadow();
                if (shadow != null) {
                  shadow.compare(object, exchanges, body -> reply(body, hook, root),
                      planned.answering() instanceof Plan.Answering.CheckedBy plain ? plain.check() : null, checked,
                      shape.otherAnswerFields());
                }
              })
              .flatMap(checked -> converge(key, synced, owned, checked, hook.finalizing(), guarded,
                  written.recorder(key, uid)));
        });
  }

  private Mono<HookCall.Reply> invoke(ObjectNode request, ChosenHook hook, HookCaller.RootObject root) {
    return hook.caller().call(request, root).map(body -> reply(body, hook, root));
  }

  /** A hook's answer as the sync reads it. */
  private HookCall.Reply reply(JsonNode body, ChosenHook hook, HookCaller.RootObject root) {
    return new HookCall.Reply(SyncResponse.parse(body, shape.ownedField(), shape.otherAnswerFields(),
        hook.unknownFields(), field -> LOG.debug("{}: {} hook answered unknown field {} for {}", controller,
            hook.name(), field, root)), body);
  }

  /** {@code {controller, <object>, <kind's fields>, <owned>, related, finalizing}}. */
  private ObjectNode request(SyncedObject synced, ObjectNode json, Map<ChildType, List<KubeObject>> observed,
      ObjectNode relatedObjects, ChosenHook hook, ObjectNode kindFields) {
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set(shape.objectField(), json);
    request.setAll(kindFields);
    ObjectNode map = request.putObject(shape.ownedField());
    boolean namespaced = synced.resource().namespaced();
    String namespace = synced.object().namespace();
    observed.forEach((type, objects) -> {
      ObjectNode group = map.putObject(ObjectMapKeys.groupKey(type.resource().kind(), type.resource().apiVersion()));
      for (KubeObject child : objects) {
        // Observed objects go out as they came: the request is only written, so nothing parses them. One in another
        // namespace than its namespaced parent is keyed as a cluster-scoped parent's are, namespace/name, so that it
        // never shares a v1 key with a namesake in the parent's namespace.
        boolean keyedByName = namespaced && child.namespace().equals(namespace);
        group.putRawValue(ObjectMapKeys.objectKey(hook.version(), keyedByName, child.namespace(), child.name()),
            child.raw());
      }
    });
    if (shape.finalizable()) {
      request.set("related", relatedObjects);
      request.put("finalizing", hook.finalizing());
    }
    return request;
  }

  /**
   * @param finalizing whether the finalize hook answered: then {@code finalized: true} lets the finalizer go
   * @param guarded whether the answer is held to the delete rules ({@link DeleteGuard})
   */
  private Mono<Optional<Duration>> converge(K key, SyncedObject synced, Map<ChildType, List<KubeObject>> observed,
      Answer.Checked checked, boolean finalizing, boolean guarded, WrittenChildren.Recorder recorder) {
    KubeObject object = synced.object();
    SyncResponse response = checked.response();
    Answer answer = checked.answer();
    boolean finalized = finalizing && response.finalized();
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
    HotLoopGuard.Writes writes = new HotLoopGuard.Writes(recorder);
    // Finalized: the garbage collector deletes the owned objects, but not those in other namespaces, which go first.
    Mono<Boolean> converged = manage ? owned.manage(object, converging, answer.desired(), writes).thenReturn(true)
        : finalized && kind.ownsInOtherNamespaces() ? deleteInOtherNamespaces(object, converging, writes)
        : Mono.just(true);
    // The kind's own writes happen even when some owned-object writes failed, as upstream does; that failure is
    // reported after them.
    Supplier<Mono<Void>> last = answer.last();
    return converged.materialize()
        .doOnNext(ownedSignal -> hotLoops.synced(key, object, writes.list()))
        .flatMap(ownedSignal -> answer.ownWrites().get()
            .flatMap(stillThere -> finalized && stillThere && Boolean.TRUE.equals(ownedSignal.get())
                ? finalizers.remove(synced.resource(), synced.latest()).then()
                : Mono.<Void>empty())
            .then(Mono.justOrEmpty(ownedSignal.getThrowable()).flatMap(Mono::error))
            .then(last == null ? Mono.<Void>empty() : Mono.defer(last)))
        .then(Mono.just(Optional.ofNullable(response.resyncAfter())));
  }

  /**
   * Deletes the owned objects of {@code object} in other namespaces than its own (in reverse order, {@link
   * ChildOrder}), as a parent being let go needs: the garbage collector does not delete them.
   *
   * @return whether every one of them is deleted or being deleted once this completes (else an order still waits:
   *     the deletions' events bring the object back)
   */
  private Mono<Boolean> deleteInOtherNamespaces(KubeObject object, Map<ChildType, List<KubeObject>> observed,
      WrittenChildren.Recorder recorder) {
    Map<ChildType, List<KubeObject>> elsewhere = new LinkedHashMap<>();
    observed.forEach((type, objects) -> elsewhere.put(type, objects.stream()
        .filter(child -> OtherNamespaceChildren.elsewhere(object, child.namespace())).toList()));
    Map<ChildType, List<KubeObject>> undesired = ChildrenManager.undesired(elsewhere, List.of());
    boolean allNow = count(ChildOrder.deletable(undesired, elsewhere, List.of())) == count(undesired);
    return owned.manage(object, elsewhere, List.of(), recorder).thenReturn(allNow);
  }

  private static int count(Map<ChildType, List<KubeObject>> objects) {
    return objects.values().stream().mapToInt(List::size).sum();
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
}
