package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.ControllerSpec;
import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.api.WorkersAnnotation;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookConfig;
import dev.metareactor.engine.hook.HookMaterials;
import dev.metareactor.engine.hook.RetryAfterException;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.KeyedWorkQueue;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.queue.WorkQueueOptions;
import dev.metareactor.engine.shard.Handover;
import dev.metareactor.engine.shard.ShardKeys;
import dev.metareactor.engine.shard.ShardMover;
import dev.metareactor.engine.shard.ShardedController;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.http.AnswerScope;
import dev.metareactor.http.HookIdentity;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Gauge;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * What every kind of hosted controller does the same way, so that a kind only says what is its own (which
 * resources it needs, how events become keys, what one sync does):
 *
 * <ul>
 *   <li><b>Start</b>: wait until discovery serves every resource the controller names (one {@code CreateError}
 *       Warning says which are missing; the controller then starts by itself), and until the kind has no other
 *       reason to wait; take the informers, wire them to the work queue, wait for their caches, read the hooks'
 *       TLS material and credentials, start {@code --workers} workers and the {@code resyncPeriodSeconds} timer.</li>
 *   <li><b>Sync outcomes</b>: a sync's result becomes the queue's outcome; a failure records a Warning
 *       {@code SyncError} ({@code Sync error: ...}) on the object and backs it off; a 429, a write conflict and a
 *       related informer still filling its cache re-queue without an Event.</li>
 *   <li><b>Stop</b>: stop routing, drain for at most the given time, give everything back. <b>Retire</b> (the
 *       controller object was deleted): the same, then remove this controller's finalizer from every object that
 *       still carries it.</li>
 * </ul>
 *
 * @param <K> the work-queue key: which object one sync is about
 * @param <S> the kind's spec
 */
public abstract class AbstractHostedController<K extends SyncKey, S extends ControllerSpec>
    implements HostedController {

  private static final Duration SYNC_POLL = Duration.ofMillis(50);
  private static final Duration MIN_RESYNC_PERIOD = Duration.ofSeconds(1);
  private static final int RETIRE_WRITES_IN_PARALLEL = 8;
  /** Numbers the syncs of the process, for their log lines. */
  private static final AtomicLong SYNC_RUNS = new AtomicLong();

  private final Logger log = LoggerFactory.getLogger(getClass());
  private final String kind;
  private final String name;
  private final int resyncPeriodSeconds;
  /** How many keys sync at once: {@code --workers}, or the object's {@link WorkersAnnotation}. */
  private final int workerCount;
  private final KubeObject controllerObject;
  private final ObjectNode controllerJson;
  private final S spec;
  private final ControllerContext context;
  private final Finalizers finalizers;
  private final Map<String, Optional<HookConfig>> hookConfigs;
  private final ChildApplier applier;
  /** {@code shard.metareactor.dev/<tag>.<name>}: with {@code --sharding}, which shard owns a parent. */
  private final String ownerLabel;

  private volatile Phase phase = Phase.NEW;
  /** Guards everything below: start and stop may race (a spec change while the controller still starts). */
  private final Object lifecycle = new Object();
  private boolean stopped;
  private final List<InformerLease> leases = new ArrayList<>();
  /** The informers of owned objects, which a move to another shard relabels. */
  private final List<InformerLease> ownedInformers = new ArrayList<>();
  /** With {@code --sharding}: moves parents to their shard; made in begin(). */
  private @Nullable ShardMover mover;
  private final List<Disposable> subscriptions = new ArrayList<>();
  // Made when the controller begins (the queue and hook materials before wire() runs, the sync by it); nothing uses
  // them before.
  private @Nullable KeyedWorkQueue<K> queue;
  private @Nullable HookMaterials hookMaterials;
  private @Nullable SyncMetrics syncMetrics;
  private @Nullable RelatedObjects<K> related;
  private @Nullable Disposable workers;
  /** Set by {@link #wire}, read by syncs and timers after it. */
  private volatile @Nullable ObjectSync<K> sync;
  /** True while {@link #wire} runs (under the lifecycle lock). */
  private boolean wiring;
  /** Whether the last sync was refused by the {@link WriteFence} (logged at info once, not for every key). */
  private final AtomicBoolean fenced = new AtomicBoolean();

  /**
   * @param controllerObject the controller object as it was read
   * @param parse the kind's parser of its spec from the whole object (kind, name, hooks by name, resync period,
   *     endpoint settings and the rest)
   * @throws dev.metareactor.engine.api.InvalidControllerException naming the field when the object cannot be hosted
   *     as written (its spec, or a hook's webhook)
   */
  protected AbstractHostedController(KubeObject controllerObject, ControllerContext context,
      Function<ObjectNode, S> parse) {
    this.controllerObject = Objects.requireNonNull(controllerObject, "controllerObject");
    this.controllerJson = controllerObject.toTree();
    this.spec = parse.apply(controllerJson);
    this.kind = spec.kind();
    this.name = spec.name();
    this.resyncPeriodSeconds = spec.resyncPeriodSeconds();
    this.context = Objects.requireNonNull(context, "context");
    this.workerCount = WorkersAnnotation.workers(controllerObject.annotations(), context.options().workers());
    // Read by the sync; checked here so that an invalid value is a CreateError before anything starts.
    DeleteGuardAnnotation.enabled(controllerObject.annotations());
    this.finalizers = new Finalizers(spec.finalizerName(), context.api());
    this.ownerLabel = ShardKeys.ownerLabel(kind, name);
    this.applier = ChildApplier.of(context.options().applyStrategy(), context.api(),
        context.options().ssaFieldManager(), ownLabels());
    Map<String, Optional<HookConfig>> configs = new LinkedHashMap<>();
    spec.hooksByName().forEach((hookName, hook) ->
        configs.put(hookName, HookConfig.of(hook, spec.endpointConfigs(), hookName)));
    this.hookConfigs = Collections.unmodifiableMap(configs);
  }

  // ---- what each kind says

  /** Every resource the controller names; it starts once discovery serves them all. */
  protected abstract List<ResourceRule> resources();

  /**
   * A reason not to start yet with these resources, or empty. The reason is recorded once as a Warning
   * {@code SyncError} on the controller object; the controller starts by itself once discovery shows otherwise.
   *
   * @param resources the resolved {@link #resources()}, in the same order
   */
  protected Optional<String> notReady(List<ApiResource> resources) {
    return Optional.empty();
  }

  /**
   * Takes the informers (with {@link #acquire}) and wires their events (with {@link #subscribe}) to the queue
   * ({@link #enqueue}); the hooks come from {@link #hook} and {@link #relatedObjects}. Runs once, under the
   * lifecycle lock, on a worker thread.
   *
   * @param resources the resolved {@link #resources()}, in the same order
   * @return the sync the workers run, which also answers which objects the controller is responsible for
   */
  protected abstract ObjectSync<K> wire(List<ApiResource> resources);

  // ---- for subclasses

  protected final String name() {
    return name;
  }

  protected final ControllerContext context() {
    return context;
  }

  /** How many keys sync at once, and so how many hook calls a sync may make at once. */
  protected final int workers() {
    return workerCount;
  }

  protected final ObjectNode controllerJson() {
    return controllerJson;
  }

  /** The spec the controller was built from. */
  protected final S spec() {
    return spec;
  }

  protected final Finalizers finalizers() {
    return finalizers;
  }

  /** How the objects the controller owns are written ({@code --apply-strategy}). */
  protected final ChildApplier applier() {
    return applier;
  }

  /**
   * The labels the engine keeps on every object the controller writes for a parent, beside what the hook asks for:
   * with {@code --sharding}, the owner label with this replica's shard (a replica writes only for its own parents).
   */
  protected final Map<String, String> ownLabels() {
    return context.sharding().enabled() ? Map.of(ownerLabel, context.sharding().membership().self()) : Map.of();
  }

  /**
   * The types of children (or attachments, or outputs) these rules name, each with its informer taken.
   *
   * @param resources the rules' resources as resolved, in the same order
   */
  protected final List<ChildType> childTypes(List<ChildResourceRule> rules, List<ApiResource> resources) {
    List<ChildType> types = new ArrayList<>();
    for (int i = 0; i < rules.size(); i++) {
      types.add(new ChildType(resources.get(i), acquireOwned(resources.get(i)), rules.get(i).updateMethod()));
    }
    return types;
  }

  /**
   * Takes an informer for the controller's lifetime, of every object of the resource (objects the controller reads:
   * related objects, a MapController's inputs).
   */
  protected final InformerLease acquire(ApiResource resource) {
    InformerLease lease = context.informers().acquire(resource);
    leases.add(lease);
    return lease;
  }

  /**
   * Takes the informer of a resource whose objects the controller syncs (parents, targets): with {@code --sharding},
   * of this replica's share of them only.
   */
  protected final InformerLease acquireSynced(ApiResource resource) {
    return context.sharding().enabled() ? acquireShare(resource) : acquire(resource);
  }

  /**
   * Takes the informer of a resource of objects the controller writes for its parents (children, attachments,
   * outputs, revisions): with {@code --sharding}, of those of this replica's parents only.
   */
  protected final InformerLease acquireOwned(ApiResource resource) {
    InformerLease lease = context.sharding().enabled() ? acquireShare(resource) : acquire(resource);
    ownedInformers.add(lease);
    return lease;
  }

  private InformerLease acquireShare(ApiResource resource) {
    InformerLease lease = context.informers().acquire(resource, "", context.sharding().selector(ownerLabel));
    leases.add(lease);
    return lease;
  }

  /** Routes an informer's events; a routing bug is logged, never allowed to end the event stream. */
  protected final void subscribe(InformerLease informer, String what, Consumer<ObjectEvent> route) {
    subscriptions.add(informer.events().subscribe(event -> {
      try {
        route.accept(event);
      } catch (RuntimeException e) {
        log.error("{} {}: routing a {} event of {} failed", kind, name, what, event.object().describe(), e);
      }
    }));
  }

  /** Runs {@code release} when the controller stops (what the kind started in {@link #wire}). */
  protected final void onStop(Disposable release) {
    subscriptions.add(release);
  }

  /** Adds a key to the work queue (informer threads: only this, nothing else). */
  protected final void enqueue(K key) {
    Objects.requireNonNull(queue, "events are subscribed after the queue is made").add(key);
  }

  /**
   * The caller of the hook named {@code type}, or {@code null} when the controller object has none; only while
   * {@link #wire} runs.
   *
   * @throws IllegalArgumentException when the kind declares no hook of that name
   */
  protected final @Nullable HookCaller hook(String type) {
    Optional<HookConfig> config = hookConfigs.get(type);
    if (config == null) {
      throw new IllegalArgumentException(kind + " declares no hook named " + type + "; it has " + hookConfigs.keySet());
    }
    requireWiring("hook");
    HookMaterials materials = Objects.requireNonNull(hookMaterials, "made before wire() runs");
    return config.map(hook -> materials.register(hook.webhook(), hook.materials(),
        new HookIdentity(type, name, kind))).orElse(null);
  }

  private void requireWiring(String what) {
    if (!wiring) {
      throw new IllegalStateException(what + "() is only for wire()");
    }
  }

  /**
   * The sync the workers run: {@code syncKind}'s part within {@link ObjectSync}, with this controller's sync and
   * finalize hooks, its related objects (from {@link #relatedObjects}) and its finalizer.
   */
  protected final ObjectSync<K> objectSync(ObjectSync.Kind<K> syncKind, ObjectSync.Shape shape,
      RelatedObjects<K> relatedObjects) {
    return objectSync(syncKind, shape, relatedObjects,
        new ObjectSync.Hooks(chosenHook("sync"), chosenHook("finalize")));
  }

  /** The same with the kind's own hooks in the sync and finalize places (either may be {@code null}). */
  protected final ObjectSync<K> objectSync(ObjectSync.Kind<K> syncKind, ObjectSync.Shape shape,
      RelatedObjects<K> relatedObjects, ObjectSync.Hooks hooks) {
    ParentEvents events = context.events()::record;
    return new ObjectSync<>(syncKind, shape, kind + " " + name, controllerJson, hooks, relatedObjects,
        new ChildrenManager(context.api(), applier, events, Objects.requireNonNull(syncMetrics, "made in begin()")),
        finalizers, events, this::elsewhere);
  }

  /** The hook named {@code type} as a sync calls it, or {@code null} when the object has none; only in wire(). */
  protected final ObjectSync.@Nullable ChosenHook chosenHook(String type) {
    return Objects.requireNonNull(hookConfigs.get(type), "a hook the kind declares")
        .map(config -> new ObjectSync.ChosenHook(type,
            Objects.requireNonNull(hook(type), "a hook the object defines has a caller"), config.hook()))
        .orElse(null);
  }

  /** The customize hook and its related objects; only while {@link #wire} runs, once. */
  protected final RelatedObjects<K> relatedObjects() {
    requireWiring("relatedObjects");
    if (related != null) {
      throw new IllegalStateException("relatedObjects() was called already");
    }
    // A kind without a customize hook (MapController) gets related objects that are always empty.
    Optional<HookConfig> customize = hookConfigs.getOrDefault("customize", Optional.empty());
    related = new RelatedObjects<>(kind, name, controllerJson,
        hookConfigs.containsKey("customize") ? hook("customize") : null, customize.map(HookConfig::hook), context,
        this::enqueue);
    return related;
  }

  // ---- lifecycle

  @Override
  public final Phase phase() {
    return phase;
  }

  @Override
  public final Mono<Void> start() {
    return Mono.defer(() -> {
      List<ResourceRule> rules = resources();
      phase = Phase.SYNCING;
      AtomicBoolean warnedMissing = new AtomicBoolean();
      AtomicBoolean warnedNotReady = new AtomicBoolean();
      return context.discovery().snapshots()
          .filter(map -> {
            List<ResourceRule> missing = rules.stream().filter(rule -> lookup(map, rule).isEmpty()).toList();
            if (!missing.isEmpty()) {
              phase = Phase.WAITING_FOR_RESOURCES;
              if (warnedMissing.compareAndSet(false, true)) {
                reportMissing(missing);
              }
              return false;
            }
            Optional<String> reason = notReady(resolve(map, rules));
            reason.ifPresent(why -> {
              phase = Phase.WAITING_FOR_RESOURCES;
              if (warnedNotReady.compareAndSet(false, true)) {
                log.warn("{} {} waits: {}", kind, name, why);
                context.events().record(controllerObject, EventRecorder.Type.Warning, "SyncError", why);
              }
            });
            return reason.isEmpty();
          })
          .next()
          .map(map -> resolve(map, rules))
          .publishOn(context.scheduling().blocking())
          .flatMap(resources -> begin(resources) ? awaitSynced().then(Mono.fromRunnable(this::run)) : Mono.empty());
    }).then();
  }

  private static Optional<ApiResource> lookup(ResourceMap map, ResourceRule rule) {
    return map.byResource(rule.apiVersion(), rule.resource());
  }

  private static List<ApiResource> resolve(ResourceMap map, List<ResourceRule> rules) {
    return rules.stream().map(rule -> lookup(map, rule).orElseThrow()).toList();
  }

  private void reportMissing(List<ResourceRule> missing) {
    ResourceRule first = missing.get(0);
    String message = "discovery: can't find resource " + first.resource() + " in apiVersion " + first.apiVersion()
        + (missing.size() > 1 ? " (and " + (missing.size() - 1) + " more)" : "")
        + "; the controller starts when it is served";
    log.warn("{} {}: {}", kind, name, message);
    context.events().record(controllerObject, EventRecorder.Type.Warning, "CreateError",
        "Cannot create new controller: " + message);
  }

  /** Takes the informers and wires events; {@code false} if the controller was stopped meanwhile. */
  private boolean begin(List<ApiResource> resources) {
    synchronized (lifecycle) {
      if (stopped) {
        return false;
      }
      phase = Phase.SYNCING;
      try {
        queue = new KeyedWorkQueue<>(
            new WorkQueueOptions(kind + "-" + name, name, workerCount, context.options().retry()),
            context.scheduling(), context.meters());
        hookMaterials = new HookMaterials(context.informers(), context.discovery(), context.hooks(),
            context.scheduling(), this::reportHookProblem, this::reportInsecureHook);
        SyncMetrics metrics = new SyncMetrics(context.meters(), name, workerCount);
        syncMetrics = metrics;
        subscriptions.add(metrics::close);
        wiring = true;
        ObjectSync<K> wired;
        try {
          wired = wire(resources);
          sync = wired;
        } finally {
          wiring = false;
        }
        if (context.sharding().enabled()) {
          shard(wired);
        }
        leases.addAll(hookMaterials.watch());
        return true;
      } catch (RuntimeException e) {
        release();
        throw e;
      }
    }
  }

  /**
   * With {@code --sharding}: the mover of parents that belong to another shard (which also holds back a parent handed
   * to this one until its owned objects are cached), the sharder's registration, and a membership change syncing
   * every parent of this replica's share that is now another shard's (to move it).
   */
  private void shard(ObjectSync<K> wired) {
    Sharding sharding = context.sharding();
    ShardMover shardMover = new ShardMover(context.api(), sharding.membership(), ownerLabel, ownedInformers,
        context.meters(), kind, name, context.scheduling().nanoTime());
    mover = shardMover;
    List<ShardedController.Synced> synced = wired.syncedResources().stream()
        .map(type -> new ShardedController.Synced(type.resource(), type::responsibleFor)).toList();
    AutoCloseable registration = sharding.register(new ShardedController(kind, name, ownerLabel, synced,
        ownedInformers.stream().map(InformerLease::resource).distinct().toList()));
    subscriptions.add(() -> {
      try {
        registration.close();
      } catch (Exception e) {
        log.warn("{} {}: leaving the sharder failed", kind, name, e);
      }
    });
    subscriptions.add(sharding.membership().changes().subscribe(live -> {
      shardMover.membershipChanged();
      if (phase == Phase.RUNNING) {
        wired.keysOf(object -> shardMover.destination(object) != null).forEach(this::enqueue);
      }
    }));
    Gauge gauge = MetricCatalogue.SHARD_PARENTS.gauge(wired, ObjectSync::responsibleCount)
        .tag("controller", name).tag("kind", kind).register(context.meters());
    subscriptions.add(() -> context.meters().remove(gauge));
  }

  /**
   * With {@code --sharding}: moves {@code object} if another shard owns it now, or holds it back while this replica's
   * caches lack owned objects that moved with it ({@link ShardMover#place}); empty when it is synced here.
   */
  private Optional<Mono<Void>> elsewhere(SyncedObject object) {
    ShardMover shardMover = mover;
    return shardMover == null ? Optional.empty() : shardMover.place(object.resource(), object.object());
  }

  /** A hook cannot be called (its Secret is missing, say): once per problem, a Warning on the controller. */
  private void reportHookProblem(String problem) {
    log.warn("{} {}: {}", kind, name, problem);
    context.events().record(controllerObject, EventRecorder.Type.Warning, "SyncError",
        "[" + name + "] Sync error - " + problem);
  }

  /** A hook sends credentials over plain http: once per hook, a Warning on the controller. */
  private void reportInsecureHook(String warning) {
    log.warn("{} {}: {}", kind, name, warning);
    context.events().record(controllerObject, EventRecorder.Type.Warning, "InsecureCredentials", warning);
  }

  private Mono<Void> awaitSynced() {
    return Flux.interval(Duration.ZERO, SYNC_POLL, context.scheduling().work())
        .filter(tick -> leases.stream().allMatch(InformerLease::hasSynced))
        .next()
        .then();
  }

  private void run() {
    synchronized (lifecycle) {
      if (stopped) {
        return;
      }
      Objects.requireNonNull(hookMaterials, "made in begin()").refresh();
      workers = Objects.requireNonNull(queue, "made in begin()").process(this::syncOnce).subscribe();
      if (resyncPeriodSeconds > 0) {
        Duration period = Duration.ofSeconds(resyncPeriodSeconds);
        period = period.compareTo(MIN_RESYNC_PERIOD) < 0 ? MIN_RESYNC_PERIOD : period;
        ObjectSync<K> wired = Objects.requireNonNull(sync, "made in begin()");
        subscriptions.add(Flux.interval(period, period, context.scheduling().work())
            .subscribe(tick -> wired.responsibleKeys().forEach(this::enqueue)));
      }
      phase = Phase.RUNNING;
    }
  }

  /**
   * One run of one key; whatever happens ends in an outcome for the queue, never in an error. Its log lines carry
   * {@code controller}, {@code kind}, {@code key} and {@code sync} (the run's number in this process) as fields of
   * their own, so that a log query can follow one parent or one run.
   */
  private Mono<Outcome> syncOnce(K key) {
    long run = SYNC_RUNS.incrementAndGet();
    SyncMetrics metrics = Objects.requireNonNull(syncMetrics, "made in begin()");
    long start = metrics.started();
    // The hook answers of the run count against the hook client's memory budget until it ends: it holds them.
    return AnswerScope.around(Mono.defer(() -> {
          // A replica that may not act for its lease any more (a process stopped past it and woken up) does not
          // even call a hook: the parent may be another replica's by now.
          String refusal = context.fence().refusal();
          return refusal != null ? Mono.error(new WriteFence.Refused("hook call", refusal))
              : Objects.requireNonNull(sync, "the workers start after wire()").sync(key);
        }))
        .map(resyncAfter -> resyncAfter.map(Outcome::resyncAfter).orElseGet(Outcome::success))
        .doOnNext(outcome -> fenced.set(false))
        .onErrorResume(WriteFence.Refused::in, e -> {
          // Said once until a sync goes through again; each key is retried after its backoff meanwhile.
          syncLine(fenced.compareAndSet(false, true) ? log.atInfo() : log.atDebug(), key, run)
              .log("{} {}: sync of {} stopped: {}", kind, name, key, e.getMessage());
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(RetryAfterException.class, e -> {
          syncLine(log.atDebug(), key, run).log("{} {}: hook asked to retry {} after {}", kind, name, key, e.delay());
          return Mono.just(Outcome.retryAfter(e.delay()));
        })
        .onErrorResume(WriteConflicts::only, e -> {
          syncLine(log.atDebug(), key, run).log("{} {}: a write for {} conflicted with a newer change; syncing again",
              kind, name, key);
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(RelatedObjects.NotSyncedException.class, e -> {
          syncLine(log.atDebug(), key, run).log("{} {}: {}; syncing {} again", kind, name, e.getMessage(), key);
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(Handover.LaggingException.class, e -> {
          // Handed over from another shard: its owned objects' events are on their way (and re-queue it).
          syncLine(log.atDebug(), key, run).log("{} {}: {}; syncing {} once they are cached", kind, name,
              e.getMessage(), key);
          return Mono.just(Outcome.retryAfter(Handover.RECHECK));
        })
        .onErrorResume(e -> {
          reportSyncError(key, run, e);
          return Mono.just(Outcome.failed());
        })
        .doOnNext(outcome -> metrics.ended(start, switch (outcome.kind()) {
          case FAILED -> SyncMetrics.Result.ERROR;
          case RETRY_AFTER -> SyncMetrics.Result.REQUEUE;
          case SUCCESS -> outcome.after().isZero() ? SyncMetrics.Result.SUCCESS : SyncMetrics.Result.REQUEUE_AFTER;
          case CANCELLED -> SyncMetrics.Result.ERROR;
        }))
        .doOnCancel(() -> metrics.ended(start, SyncMetrics.Result.ERROR));
  }

  private LoggingEventBuilder syncLine(LoggingEventBuilder line, K key, long run) {
    return line.addKeyValue("controller", name).addKeyValue("kind", kind).addKeyValue("key", key.toString())
        .addKeyValue("sync", run);
  }

  private void reportSyncError(K key, long run, Throwable error) {
    String message = error.getMessage() == null ? error.getClass().getName() : error.getMessage();
    syncLine(log.atWarn(), key, run).log("{} {}: sync of {} failed: {}", kind, name, key, message);
    syncLine(log.atDebug(), key, run).setCause(error).log("{} {}: sync of {} failed", kind, name, key);
    Objects.requireNonNull(sync, "the workers start after wire()").cached(key).ifPresent(object ->
        context.events().record(object, key.about(), EventRecorder.Type.Warning, "SyncError",
            "Sync error: " + key.about() + message));
  }

  @Override
  public final Mono<Void> stop(Duration drainTimeout) {
    return stop(drainTimeout, false);
  }

  @Override
  public final Mono<Void> retire(Duration drainTimeout) {
    return stop(drainTimeout, true);
  }

  private Mono<Void> stop(Duration drainTimeout, boolean retire) {
    Objects.requireNonNull(drainTimeout, "drainTimeout");
    return Mono.defer(() -> {
      KeyedWorkQueue<K> draining;
      synchronized (lifecycle) {
        if (stopped) {
          return Mono.empty();
        }
        stopped = true;
        phase = Phase.STOPPED;
        subscriptions.forEach(Disposable::dispose);
        subscriptions.clear();
        draining = queue;
      }
      Mono<Boolean> drained = draining == null ? Mono.just(true) : draining.shutDown(drainTimeout);
      return drained
          .doOnNext(done -> {
            if (!done) {
              log.warn("{} {}: syncs still running after {} were cancelled", kind, name, drainTimeout);
            }
          })
          .then(retire ? removeFinalizers() : Mono.empty())
          .doFinally(signal -> {
            synchronized (lifecycle) {
              release();
            }
          })
          .then();
    });
  }

  /**
   * Removes this controller's finalizer from every object that carries it; after the queue drained, so no sync
   * adds it back. Failures are logged: the objects stay as they are and can be fixed by hand.
   */
  private Mono<Void> removeFinalizers() {
    List<SyncedObject> objects;
    synchronized (lifecycle) {
      objects = sync == null ? List.of() : sync.withFinalizer(); // never wired: nothing was synced
    }
    return Flux.fromIterable(objects)
        .flatMap(finalized -> finalizers.remove(finalized.resource(), finalized.object())
            .doOnNext(updated -> log.info("{} {} is deleted: removed its finalizer from {}", kind, name,
                finalized.object().describe()))
            .onErrorResume(e -> {
              log.error("{} {} is deleted but its finalizer could not be removed from {}: {}", kind, name,
                  finalized.object().describe(), e.getMessage());
              return Mono.empty();
            }), RETIRE_WRITES_IN_PARALLEL)
        .then();
  }

  /** Gives back the informers and ends the workers; under the lifecycle lock. */
  private void release() {
    subscriptions.forEach(Disposable::dispose);
    subscriptions.clear();
    if (related != null) {
      related.close();
    }
    if (hookMaterials != null) {
      hookMaterials.close();
    }
    if (workers != null) {
      workers.dispose();
    }
    leases.forEach(InformerLease::close);
    leases.clear();
  }

  @Override
  public String toString() {
    return kind + " " + name;
  }
}
