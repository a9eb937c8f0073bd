package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.ChildStatusAnnotation;
import dev.metareactor.engine.api.ControllerSpec;
import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.api.RecordSyncsAnnotation;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.api.WorkersAnnotation;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookConfig;
import dev.metareactor.engine.hook.HookMaterials;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.KeyedWorkQueue;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.queue.WorkQueueOptions;
import dev.metareactor.engine.shard.ShardParticipant;
import dev.metareactor.engine.shard.ShardedController;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * What every kind of hosted controller does the same way, so that a kind only says what is its own (which
 * resources it needs, how events become keys, what one sync does). Its life, in order:
 *
 * <ul>
 *   <li><b>Start</b>: wait for the resources the controller names ({@link ResourceWait}); make the work queue and
 *       hand the kind's {@link #wire} a {@link Wiring} to take its informers, route their events and make its
 *       {@link ObjectSync}; join the shards ({@link ShardParticipant}); wait for the informers' caches, read the
 *       hooks' TLS material and credentials, start {@code --workers} workers, each sync run by a {@link SyncRunner}
 *       to the queue's outcome, and the {@code resyncPeriodSeconds} timer, which spreads each period's keys over
 *       the period ({@link ResyncPacer}).</li>
 *   <li><b>Stop</b>: stop routing, drain for at most the given time, give everything back ({@link Holdings}).
 *       <b>Retire</b> (the controller object was deleted): the same, then remove this controller's finalizer from
 *       every object that still carries it.</li>
 * </ul>
 *
 * @param <K> the work-queue key: which object one sync is about
 * @param <S> the kind's spec
 */
public abstract class AbstractHostedController<K extends SyncKey, S extends ControllerSpec>
    implements HostedController {

  private static final Duration SYNC_POLL = Duration.ofMillis(50);
  private static final Duration MIN_RESYNC_PERIOD = Duration.ofSeconds(1);

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
  /** What this controller wrote, until each write's event comes back: its routers tell echoes from changes. */
  private final OwnWrites ownWrites = new OwnWrites();
  private final Finalizers finalizers;
  private final Map<String, Optional<HookConfig>> hookConfigs;
  private final Map<String, HookConfig.Webhook> shadowConfigs;
  private final ShardParticipant shard;
  private final ChildApplier applier;

  private volatile Phase phase = Phase.NEW;
  /** Guards everything below: start and stop may race (a spec change while the controller still starts). */
  private final Object lifecycle = new Object();
  private boolean stopped;
  /** Whether workers take keys from the queue (not when begun for one-shot syncs): only then is there to drain. */
  private boolean working;
  private final Holdings holdings = new Holdings();
  // Made when the controller begins (the queue and hook materials before wire() runs, the sync by it); nothing uses
  // them before.
  private @Nullable KeyedWorkQueue<K> queue;
  private @Nullable HookMaterials hookMaterials;
  private @Nullable SyncRunner<K> runner;
  /** Set once {@link #wire} returned, read by timers and retiring after it. */
  private volatile @Nullable ObjectSync<K> sync;

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
    // Every write of the controller goes through its own API, which remembers what each made (ownWrites).
    this.context = Objects.requireNonNull(context, "context").withApi(ownWrites.recording(context.api()));
    this.workerCount = WorkersAnnotation.workers(controllerObject.annotations(), context.options().workers());
    // Read by the sync; checked here so that an invalid value is a CreateError before anything starts.
    DeleteGuardAnnotation.enabled(controllerObject.annotations());
    RecordSyncsAnnotation.enabled(controllerObject.annotations());
    ChildStatusAnnotation.enabled(controllerObject.annotations());
    this.finalizers = new Finalizers(spec.finalizerName(), this.context.api());
    this.shard = new ShardParticipant(context.sharding(), context.informers(), this.context.api(), context.meters(),
        kind, name, context.scheduling().nanoTime());
    this.applier = ChildApplier.of(context.options().applyStrategy(), this.context.api(),
        context.options().ssaFieldManager(), shard.ownLabels());
    Map<String, Optional<HookConfig>> configs = new LinkedHashMap<>();
    spec.hooksByName().forEach((hookName, hook) ->
        configs.put(hookName, HookConfig.of(hook, spec.endpointConfigs(), hookName)));
    this.hookConfigs = Collections.unmodifiableMap(configs);
    this.shadowConfigs = Shadow.configs(controllerObject, spec);
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
   * Takes the informers and wires their events to the queue, and makes the sync from the hooks and related objects:
   * all through {@code wiring}, which is closed when this returns. Runs once, under the lifecycle lock, on a worker
   * thread, before any sync.
   *
   * @param resources the resolved {@link #resources()}, in the same order
   * @return the sync the workers run, which also answers which objects the controller is responsible for
   */
  protected abstract ObjectSync<K> wire(Wiring<K> wiring, List<ApiResource> resources);

  // ---- for subclasses

  protected final String name() {
    return name;
  }

  protected final ControllerContext context() {
    return context;
  }

  /** The spec the controller was built from. */
  protected final S spec() {
    return spec;
  }

  // ---- lifecycle

  @Override
  public final Phase phase() {
    return phase;
  }

  @Override
  public final Mono<Void> start() {
    return begun().then(Mono.fromRunnable(this::run));
  }

  @Override
  public final Mono<OneShot> startOneShot() {
    return begun().then(Mono.fromCallable(() -> {
      synchronized (lifecycle) {
        if (stopped) {
          return null;
        }
        Objects.requireNonNull(hookMaterials, "made in begin()").refresh();
        phase = Phase.RUNNING;
        return new OneShotSyncs<>(Objects.requireNonNull(sync, "made in begin()"),
            Objects.requireNonNull(runner, "made in begin()"));
      }
    }));
  }

  /**
   * Waits for the resources, takes the informers and wires the sync, and waits for the caches; completes empty when
   * done, or when the controller was stopped meanwhile (then {@link #run} and {@link #startOneShot} find it so).
   */
  private Mono<Void> begun() {
    return Mono.defer(() -> {
      phase = Phase.SYNCING;
      return new ResourceWait(log, kind, name, controllerObject, context.discovery(), context.events())
          .resolved(resources(), this::notReady, () -> phase = Phase.WAITING_FOR_RESOURCES)
          .publishOn(context.scheduling().blocking())
          .flatMap(resources -> begin(resources) ? awaitSynced() : Mono.empty());
    });
  }

  /** Takes the informers and wires events; {@code false} if the controller was stopped meanwhile. */
  private boolean begin(List<ApiResource> resources) {
    synchronized (lifecycle) {
      if (stopped) {
        return false;
      }
      phase = Phase.SYNCING;
      try {
        KeyedWorkQueue<K> made = new KeyedWorkQueue<>(
            new WorkQueueOptions(kind + "-" + name, name, workerCount, context.options().retry()),
            context.scheduling(), context.meters());
        queue = made;
        HookMaterials materials = new HookMaterials(context.informers(), context.discovery(), context.hooks(),
            context.scheduling(), this::reportHookProblem, this::reportInsecureHook, context.fence());
        hookMaterials = materials;
        holdings.untilDrained(materials::close);
        SyncMetrics metrics = new SyncMetrics(context.meters(), name, workerCount);
        holdings.untilStop(metrics::close);
        ObjectSync<K> wired;
        try (Wiring<K> wiring = new Wiring<>(kind, name, controllerJson, context, hookConfigs, shadowConfigs,
            materials, shard, finalizers, applier, metrics, workerCount, ownWrites, (key, trigger) -> made.add(key,
                // Until the workers start, what comes is the caches' initial list (ADDED events of all they hold).
                phase == Phase.RUNNING ? trigger : Trigger.of(Trigger.Cause.START)), log, holdings)) {
          wired = wire(wiring, resources);
        }
        sync = wired;
        runner = new SyncRunner<>(log, kind, name, wired, metrics, context.fence(), context.events(),
            SyncRecorder.of(context.options().recording(), controllerObject, context.scheduling(), kind, name,
                this::reportHookProblem),
            context.tracing(), new RecentSyncs(context.history(), context.scheduling().wallClock(), kind, name));
        holdings.untilStop(shard.join(wired.syncedResources().stream()
                .map(type -> new ShardedController.Synced(type.resource(), type::responsibleFor)).toList(),
            which -> {
              if (phase == Phase.RUNNING) {
                wired.keysOf(which).forEach(key -> made.add(key, Trigger.of(Trigger.Cause.SHARD_LEAVING)));
              }
            }, wired::responsibleCount));
        materials.watch().forEach(holdings::lease);
        return true;
      } catch (RuntimeException e) {
        holdings.release();
        throw e;
      }
    }
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
        .filter(tick -> holdings.informersSynced())
        .next()
        .then();
  }

  private void run() {
    synchronized (lifecycle) {
      if (stopped) {
        return;
      }
      Objects.requireNonNull(hookMaterials, "made in begin()").refresh();
      KeyedWorkQueue<K> made = Objects.requireNonNull(queue, "made in begin()");
      holdings.untilDrained(made.process(Objects.requireNonNull(runner, "made in begin()")::run).subscribe());
      working = true;
      if (resyncPeriodSeconds > 0) {
        Duration period = Duration.ofSeconds(resyncPeriodSeconds);
        period = period.compareTo(MIN_RESYNC_PERIOD) < 0 ? MIN_RESYNC_PERIOD : period;
        ObjectSync<K> wired = Objects.requireNonNull(sync, "made in begin()");
        holdings.untilStop(new ResyncPacer<>(period, wired::responsibleKeys,
            key -> made.add(key, Trigger.of(Trigger.Cause.RESYNC_PERIOD)), context.scheduling().work()).start());
      }
      phase = Phase.RUNNING;
    }
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
        holdings.stop();
        draining = working ? queue : null;
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
              holdings.release();
            }
          })
          .then();
    });
  }

  /** After the queue drained (so no sync adds it back), this controller's finalizer off every object. */
  private Mono<Void> removeFinalizers() {
    List<SyncedObject> objects;
    synchronized (lifecycle) {
      objects = sync == null ? List.of() : sync.withFinalizer(); // never wired: nothing was synced
    }
    return finalizers.removeFromAll(objects, kind + " " + name);
  }

  @Override
  public String toString() {
    return kind + " " + name;
  }
}
