package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.ChildStatusAnnotation;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.hook.CelHookCaller;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookConfig;
import dev.metareactor.engine.hook.HookMaterials;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.shard.ShardParticipant;
import dev.metareactor.http.HookIdentity;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import reactor.core.Disposable;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a hosted controller's {@code wire()} builds its sync from: informers to take, events to route to the work
 * queue, the hooks and related objects, and at last the {@link ObjectSync} the workers run. Handed to {@code wire()}
 * once, before the queue runs, and closed when it returns: every method of it throws after that, so what may only
 * happen while the controller wires itself cannot happen later. Everything taken here is held until the controller
 * stops ({@link Holdings}).
 *
 * @param <K> the work-queue key
 */
public final class Wiring<K extends SyncKey> implements AutoCloseable {

  private final String kind;
  private final String name;
  private final ObjectNode controllerJson;
  private final ControllerContext context;
  private final Map<String, Optional<HookConfig>> hookConfigs;
  /** The shadow hooks by the name of the hook each stands beside ({@code metareactor.dev/shadow-<hook>-url}). */
  private final Map<String, HookConfig.Webhook> shadowConfigs;
  private final HookMaterials hookMaterials;
  private final ShardParticipant shard;
  private final Finalizers finalizers;
  private final ChildApplier applier;
  private final SyncMetrics metrics;
  private final int workers;
  private final OwnWrites ownWrites;
  private final BiConsumer<K, Trigger> queue;
  private final Logger log;
  private final Holdings holdings;
  private boolean relatedMade;
  private boolean closed;

  /**
   * @param hookConfigs the hooks the kind declares, by name, each as the controller object defines it (or not)
   * @param workers how many keys sync at once
   * @param ownWrites what the controller wrote: the events that show it are marked as its own before routing
   * @param queue adds a key to the work queue, for a cause
   * @param log the controller's logger
   */
  Wiring(String kind, String name, ObjectNode controllerJson, ControllerContext context,
      Map<String, Optional<HookConfig>> hookConfigs, Map<String, HookConfig.Webhook> shadowConfigs,
      HookMaterials hookMaterials, ShardParticipant shard, Finalizers finalizers, ChildApplier applier,
      SyncMetrics metrics, int workers, OwnWrites ownWrites, BiConsumer<K, Trigger> queue, Logger log,
      Holdings holdings) {
    this.kind = kind;
    this.name = name;
    this.controllerJson = controllerJson;
    this.context = context;
    this.hookConfigs = hookConfigs;
    this.shadowConfigs = shadowConfigs;
    this.hookMaterials = hookMaterials;
    this.shard = shard;
    this.finalizers = finalizers;
    this.applier = applier;
    this.metrics = metrics;
    this.workers = workers;
    this.ownWrites = ownWrites;
    this.queue = queue;
    this.log = log;
    this.holdings = holdings;
  }

  private void open(String what) {
    if (closed) {
      throw new IllegalStateException(what + "() is only for wire()");
    }
  }

  /** Ends the wiring: every method throws from now on. */
  @Override
  public void close() {
    closed = true;
  }

  /**
   * Takes an informer for the controller's lifetime, of every object of the resource (objects the controller reads:
   * related objects, a MapController's inputs).
   */
  public InformerLease acquire(ApiResource resource) {
    open("acquire");
    return holdings.lease(context.informers().acquire(resource));
  }

  /**
   * Takes the informer of a resource whose objects the controller syncs (parents, targets): with {@code --sharding},
   * of this replica's share of them only.
   */
  public InformerLease acquireSynced(ApiResource resource) {
    open("acquireSynced");
    return holdings.lease(shard.acquireSynced(resource));
  }

  /**
   * Takes the informer of a resource of objects the controller writes for its parents (children, attachments,
   * outputs, revisions): with {@code --sharding}, of those of this replica's parents only.
   */
  public InformerLease acquireOwned(ApiResource resource) {
    open("acquireOwned");
    return holdings.lease(shard.acquireOwned(resource));
  }

  /**
   * The types of children (or attachments, or outputs) these rules name, each with its informer taken.
   *
   * @param resources the rules' resources as resolved, in the same order
   */
  public List<ChildType> childTypes(List<ChildResourceRule> rules, List<ApiResource> resources) {
    open("childTypes");
    List<ChildType> types = new ArrayList<>();
    for (int i = 0; i < rules.size(); i++) {
      ChildResourceRule rule = rules.get(i);
      types.add(new ChildType(resources.get(i), acquireOwned(resources.get(i)), rule.updateMethod(),
          rule.statusChecks(), rule.ignoreStatusChanges()));
    }
    return types;
  }

  /**
   * Adds a key to the work queue for a cause ({@link Trigger}): what routers are given, and keep for the
   * controller's life (informer threads: only this, nothing else).
   */
  public BiConsumer<K, Trigger> queue() {
    open("queue");
    return queue;
  }

  /**
   * Routes an informer's events, those that show the controller's own writes marked so
   * ({@link ObjectEvent#ownWrite()}; an object's events wait while a write of the controller to it is in flight, see
   * {@link OwnWrites}); a routing bug is logged, never allowed to end the event stream.
   */
  public void subscribe(InformerLease informer, String what, Consumer<ObjectEvent> route) {
    open("subscribe");
    Consumer<ObjectEvent> marked = event -> {
      try {
        route.accept(shard.mark(event));
      } catch (RuntimeException e) {
        log.error("{} {}: routing a {} event of {} failed", kind, name, what, event.object().describe(), e);
      }
    };
    holdings.untilStop(informer.events().subscribe(event -> ownWrites.route(event, marked)));
  }

  /** Runs {@code release} when the controller stops (what the kind started here). */
  public void onStop(Disposable release) {
    open("onStop");
    holdings.untilStop(release);
  }

  /** The controller's finalizer, which a synced resource needs to judge responsibility. */
  public Finalizers finalizers() {
    open("finalizers");
    return finalizers;
  }

  /** How the objects the controller owns are written ({@code --apply-strategy}). */
  public ChildApplier applier() {
    open("applier");
    return applier;
  }

  /**
   * The labels the engine keeps on every object the controller writes for a parent, beside what the hook asks for
   * ({@link ShardParticipant#ownLabels}).
   */
  public Map<String, String> ownLabels() {
    open("ownLabels");
    return shard.ownLabels();
  }

  /** How many keys sync at once, and so how many hook calls a sync may make at once. */
  public int workers() {
    open("workers");
    return workers;
  }

  /**
   * The caller of the hook named {@code type}, or {@code null} when the controller object has none.
   *
   * @throws IllegalArgumentException when the kind declares no hook of that name
   */
  private @Nullable HookCaller hook(String type) {
    Optional<HookConfig> config = hookConfigs.get(type);
    if (config == null) {
      throw new IllegalArgumentException(kind + " declares no hook named " + type + "; it has " + hookConfigs.keySet());
    }
    return config.map(hook -> hook instanceof HookConfig.Cel cel
        ? new CelHookCaller(type, cel.program(), context.scheduling().blocking(), context.scheduling().work())
        : hookMaterials.register(((HookConfig.Webhook) hook).webhook(), ((HookConfig.Webhook) hook).materials(),
            new HookIdentity(type, name, kind))).orElse(null);
  }

  /**
   * The hook named {@code type} as a sync calls it, for {@code purpose}, or {@code null} when the object has none.
   */
  public @Nullable ChosenHook chosenHook(String type, ChosenHook.Purpose purpose) {
    open("chosenHook");
    return Objects.requireNonNull(hookConfigs.get(type), "a hook the kind declares")
        .map(config -> new ChosenHook(type,
            Objects.requireNonNull(hook(type), "a hook the object defines has a caller"), config.hook(), purpose,
            shadow(type)))
        .orElse(null);
  }

  /** The shadow beside the hook named {@code type}, or {@code null} when the object's annotations name none. */
  private @Nullable Shadow shadow(String type) {
    HookConfig.Webhook config = shadowConfigs.get(type);
    if (config == null) {
      return null;
    }
    HookCaller caller = hookMaterials.register(config.webhook(), config.materials(),
        new HookIdentity("shadow_" + type, name, kind));
    return new Shadow(caller, name, kind + " " + name, context.events()::record, workers, context.meters());
  }

  /** The customize hook and its related objects; once. */
  public RelatedObjects<K> relatedObjects() {
    open("relatedObjects");
    if (relatedMade) {
      throw new IllegalStateException("relatedObjects() was called already");
    }
    relatedMade = true;
    // A kind without a customize hook (MapController) gets related objects that are always empty.
    Optional<HookConfig> customize = hookConfigs.getOrDefault("customize", Optional.empty());
    RelatedObjects<K> related = new RelatedObjects<>(kind, name, controllerJson,
        hookConfigs.containsKey("customize") ? hook("customize") : null, customize.map(HookConfig::hook), context,
        queue);
    holdings.untilDrained(related::close);
    return related;
  }

  /**
   * The sync the workers run: {@code syncKind}'s part within {@link ObjectSync}, with this controller's sync and
   * finalize hooks to choose from by the synced object's state, its related objects (from {@link #relatedObjects})
   * and its finalizer.
   */
  public ObjectSync<K> objectSync(Kind<K> syncKind, ObjectSync.Shape shape, RelatedObjects<K> relatedObjects) {
    return objectSync(syncKind, shape, relatedObjects,
        new ObjectSync.Hooks(chosenHook("sync", ChosenHook.Purpose.DESIRED_STATE),
            chosenHook("finalize", ChosenHook.Purpose.FINALIZE)));
  }

  /**
   * The same with {@code hooks} to choose from by state ({@link ObjectSync.Hooks#NONE} for a kind whose plans name
   * their hooks).
   */
  public ObjectSync<K> objectSync(Kind<K> syncKind, ObjectSync.Shape shape,
      RelatedObjects<K> relatedObjects, ObjectSync.Hooks hooks) {
    open("objectSync");
    ParentEvents events = context.events()::record;
    ChildStatus childStatus = ChildStatusAnnotation.enabled(KubeObject.of(controllerJson).annotations())
        ? new ChildStatus(context.api(), context.options().applyStrategy(), context.options().ssaFieldManager(), events)
        : null;
    return new ObjectSync<>(syncKind, shape, kind + " " + name, controllerJson, hooks, relatedObjects,
        new ChildrenManager(context.api(), applier, events, metrics, childStatus), finalizers, events,
        object -> shard.place(object.resource(), object.object()),
        new HotLoopGuard(context.options().hotLoops(), events, metrics::hotLoop));
  }
}
