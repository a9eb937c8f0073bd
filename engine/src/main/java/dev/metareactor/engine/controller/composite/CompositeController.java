package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.HookCaller;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.RetryAfterException;
import dev.metareactor.engine.controller.WriteConflicts;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookMaterials;
import dev.metareactor.engine.hook.WebhookMaterials;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.queue.KeyedWorkQueue;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.queue.WorkQueueOptions;
import dev.metareactor.http.HookIdentity;
import dev.metareactor.http.InvalidWebhookException;
import dev.metareactor.http.WebhookSpec;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.node.ObjectNode;

/**
 * One hosted CompositeController: the parent and child informers, the router that turns their events into parent
 * keys, the keyed work queue with {@code --workers} workers, and the sync each worker runs.
 *
 * <p>Starting waits for API discovery to serve the parent and every child resource, so a controller for a CRD
 * that is installed later starts by itself (with one {@code CreateError} Warning saying what it waits for). Then it
 * takes the informers, waits until their caches are filled, and starts its workers; only then does it count as
 * running.
 *
 * <p>The parent resource must have the status subresource, as upstream requires: without it the controller does
 * not start, records upstream's Warning ({@code ... does not have subresource 'Status' enabled}) once, and starts
 * by itself if the subresource appears. Built-in resources with a status subresource work as parents too.
 *
 * <p>A sync that fails records a Warning {@code SyncError} Event on the parent ({@code Sync error: ...}, rate-limited
 * per object by {@code --events-qps}/{@code --events-burst}) and backs the parent off; a hook that answers 429 is
 * asked again after its {@code Retry-After}, and a write that conflicted with a newer change is simply retried,
 * both without an Event.
 *
 * <p>When its controller object is deleted, the controller {@link #retire retires}: after its last sync it removes
 * its finalizer from every parent that still carries it (upstream leaves them behind, and such parents can then
 * never be deleted).
 */
public final class CompositeController implements HostedController {

  /** The controller objects' kind. */
  public static final String KIND = "CompositeController";

  private static final Logger LOG = LoggerFactory.getLogger(CompositeController.class);
  private static final Duration SYNC_POLL = Duration.ofMillis(50);
  private static final Duration MIN_RESYNC_PERIOD = Duration.ofSeconds(1);
  private static final int RETIRE_WRITES_IN_PARALLEL = 8;

  /** How the engine hosts CompositeController objects. */
  public static ControllerKind kind() {
    return new ControllerKind(KIND, "metacontroller.k8s.io/v1alpha1", "compositecontrollers",
        "composite-metacontroller", CompositeController::create);
  }

  private final GenericKubernetesResource controllerObject;
  private final ObjectNode controllerJson;
  private final CompositeControllerSpec spec;
  private final Optional<HookConfig> syncWebhook;
  private final Optional<HookConfig> finalizeWebhook;
  private final Optional<HookConfig> customizeWebhook;
  private final ControllerContext context;
  private final Finalizers finalizers;

  private volatile Phase phase = Phase.NEW;
  /** Guards everything below: start and stop may race (a spec change while the controller still starts). */
  private final Object lifecycle = new Object();
  private boolean stopped;
  private final List<InformerLease> leases = new ArrayList<>();
  private final List<Disposable> subscriptions = new ArrayList<>();
  private KeyedWorkQueue<ParentKey> queue;
  private InformerLease parents;
  private CompositeRouter router;
  private RelatedObjects related;
  private HookMaterials hookMaterials;
  private CompositeSync sync;
  private Disposable workers;

  private CompositeController(GenericKubernetesResource controllerObject, ObjectNode controllerJson,
      CompositeControllerSpec spec, Optional<HookConfig> syncWebhook, Optional<HookConfig> finalizeWebhook,
      Optional<HookConfig> customizeWebhook, ControllerContext context) {
    this.controllerObject = controllerObject;
    this.controllerJson = controllerJson;
    this.spec = spec;
    this.syncWebhook = syncWebhook;
    this.finalizeWebhook = finalizeWebhook;
    this.customizeWebhook = customizeWebhook;
    this.context = context;
    this.finalizers = new Finalizers(spec.finalizerName(), context.api(), context.json());
  }

  /**
   * Parses and validates a CompositeController object.
   *
   * @throws InvalidControllerException naming the field that is wrong
   */
  static CompositeController create(GenericKubernetesResource object, ControllerContext context) {
    ObjectNode json = context.json().convertValue(object, ObjectNode.class);
    CompositeControllerSpec spec = CompositeControllerSpec.parse(json);
    Optional<HookConfig> sync = spec.syncHook().map(hook -> webhook(spec, hook, "spec.hooks.sync.webhook"));
    Optional<HookConfig> finalize = spec.finalizeHook()
        .map(hook -> webhook(spec, hook, "spec.hooks.finalize.webhook"));
    Optional<HookConfig> customize = spec.customizeHook()
        .map(hook -> webhook(spec, hook, "spec.hooks.customize.webhook"));
    return new CompositeController(object, json, spec, sync, finalize, customize, context);
  }

  /** A hook's webhook and where its TLS material and credentials come from. */
  private record HookConfig(WebhookSpec webhook, WebhookMaterials materials) {}

  private static HookConfig webhook(CompositeControllerSpec spec, HookSpec hook, String field) {
    WebhookSpec webhook;
    try {
      webhook = WebhookSpec.fromJson(hook.webhook());
    } catch (InvalidWebhookException e) {
      throw new InvalidControllerException(field + ": " + e.getMessage());
    }
    return new HookConfig(webhook,
        WebhookMaterials.of(hook.webhook(), spec.endpointConfigs(), webhook.endpoint(), field));
  }

  public String name() {
    return spec.name();
  }

  @Override
  public Phase phase() {
    return phase;
  }

  @Override
  public Mono<Void> start() {
    return Mono.defer(() -> {
      List<ResourceRule> rules = new ArrayList<>();
      rules.add(spec.parent());
      spec.children().forEach(child -> rules.add(child.resource()));
      phase = Phase.SYNCING;
      AtomicBoolean warnedMissing = new AtomicBoolean();
      AtomicBoolean warnedStatus = new AtomicBoolean();
      return context.discovery().snapshots()
          .doOnNext(map -> {
            List<ResourceRule> missing = rules.stream().filter(rule -> lookup(map, rule).isEmpty()).toList();
            if (!missing.isEmpty()) {
              phase = Phase.WAITING_FOR_RESOURCES;
              if (warnedMissing.compareAndSet(false, true)) {
                reportMissing(missing);
              }
            } else if (!lookup(map, spec.parent()).orElseThrow().hasStatusSubresource()) {
              phase = Phase.WAITING_FOR_RESOURCES;
              if (warnedStatus.compareAndSet(false, true)) {
                reportNoStatusSubresource(lookup(map, spec.parent()).orElseThrow());
              }
            }
          })
          .filter(map -> rules.stream().allMatch(rule -> lookup(map, rule).isPresent())
              && lookup(map, spec.parent()).orElseThrow().hasStatusSubresource())
          .next()
          .map(map -> rules.stream().map(rule -> lookup(map, rule).orElseThrow()).toList())
          .publishOn(Schedulers.boundedElastic())
          .flatMap(resources -> begin(resources) ? awaitSynced().then(Mono.fromRunnable(this::run)) : Mono.empty());
    }).then();
  }

  private static Optional<ApiResource> lookup(ResourceMap map, ResourceRule rule) {
    return map.byResource(rule.apiVersion(), rule.resource());
  }

  private void reportMissing(List<ResourceRule> missing) {
    ResourceRule first = missing.get(0);
    String message = "discovery: can't find resource " + first.resource() + " in apiVersion " + first.apiVersion()
        + (missing.size() > 1 ? " (and " + (missing.size() - 1) + " more)" : "")
        + "; the controller starts when it is served";
    LOG.warn("{} {}: {}", KIND, name(), message);
    context.events().record(controllerObject, EventRecorder.Type.Warning, "CreateError",
        "Cannot create new controller: " + message);
  }

  private void reportNoStatusSubresource(ApiResource parent) {
    String crd = parent.group().isEmpty() ? parent.resource() : parent.resource() + "." + parent.group();
    String message = "[" + name() + "] Sync error - ignoring, CRD [" + crd + "] does not have subresource 'Status' "
        + "enabled";
    LOG.warn("Ignoring {} {} until {} has the status subresource: {}", KIND, name(), crd, message);
    context.events().record(controllerObject, EventRecorder.Type.Warning, "SyncError", message);
  }

  /**
   * Takes the informers and wires events to the queue. Returns {@code false} if the controller was stopped
   * meanwhile.
   */
  private boolean begin(List<ApiResource> resources) {
    synchronized (lifecycle) {
      if (stopped) {
        return false;
      }
      phase = Phase.SYNCING;
      try {
        ApiResource parentResource = resources.get(0);
        parents = acquire(parentResource);
        List<ChildType> childTypes = new ArrayList<>();
        for (int i = 0; i < spec.children().size(); i++) {
          ChildResourceRule rule = spec.children().get(i);
          ApiResource resource = resources.get(i + 1);
          childTypes.add(new ChildType(resource, acquire(resource), rule.updateMethod()));
        }
        queue = KeyedWorkQueue.create(WorkQueueOptions.of(KIND + "-" + name(), name(), context.options()),
            context.meters());
        hookMaterials = new HookMaterials(context.informers(), context.discovery(), context.hooks(),
            this::reportHookProblem);
        related = new RelatedObjects(KIND, name(), controllerJson, hook("customize", customizeWebhook),
            spec.customizeHook(), parentResource, context, queue::add);
        router = new CompositeRouter(spec, parentResource, parents, queue::add, related::forget, context.json());
        sync = new CompositeSync(spec, controllerJson, parentResource, parents, childTypes,
            new CompositeSync.Hooks(hook("sync", syncWebhook), hook("finalize", finalizeWebhook)),
            new ChildClaimer(context.api(), context.json()), related,
            new ChildrenManager(context.api(), context.json()), finalizers, context.api(), context.json(),
            router::responsibleFor);
        subscriptions.add(parents.events().subscribe(guarded("parent", router::onParentEvent)));
        for (ChildType type : childTypes) {
          subscriptions.add(type.informer().events().subscribe(guarded("child", router::onChildEvent)));
        }
        leases.addAll(hookMaterials.watch());
        return true;
      } catch (RuntimeException e) {
        release();
        throw e;
      }
    }
  }

  private InformerLease acquire(ApiResource resource) {
    InformerLease lease = context.informers().acquire(resource);
    leases.add(lease);
    return lease;
  }

  /** The caller of one hook, or {@code null} when the controller does not define it. */
  private HookCaller hook(String type, Optional<HookConfig> config) {
    return config.map(hook -> hookMaterials.register(hook.webhook(), hook.materials(),
        new HookIdentity(type, name(), KIND))).orElse(null);
  }

  /** A hook cannot be called (its Secret is missing, say): once per problem, a Warning on the controller. */
  private void reportHookProblem(String problem) {
    LOG.warn("{} {}: {}", KIND, name(), problem);
    context.events().record(controllerObject, EventRecorder.Type.Warning, "SyncError",
        "[" + name() + "] Sync error - " + problem);
  }

  /** An informer callback that can never end the event stream: a router bug is logged, not fatal. */
  private Consumer<ObjectEvent> guarded(String what, Consumer<ObjectEvent> route) {
    return event -> {
      try {
        route.accept(event);
      } catch (RuntimeException e) {
        LOG.error("{} {}: routing a {} event of {} failed", KIND, name(), what, describe(event.object()), e);
      }
    };
  }

  private Mono<Void> awaitSynced() {
    return Flux.interval(Duration.ZERO, SYNC_POLL)
        .filter(tick -> leases.stream().allMatch(InformerLease::hasSynced))
        .next()
        .then();
  }

  private void run() {
    synchronized (lifecycle) {
      if (stopped) {
        return;
      }
      hookMaterials.refresh();
      workers = queue.process(this::syncOnce).subscribe();
      if (spec.resyncPeriodSeconds() > 0) {
        Duration period = Duration.ofSeconds(spec.resyncPeriodSeconds());
        period = period.compareTo(MIN_RESYNC_PERIOD) < 0 ? MIN_RESYNC_PERIOD : period;
        subscriptions.add(Flux.interval(period, period).subscribe(tick -> resyncAll()));
      }
      phase = Phase.RUNNING;
    }
  }

  /** {@code resyncPeriodSeconds}: every parent this controller is responsible for is synced again. */
  private void resyncAll() {
    for (GenericKubernetesResource parent : parents.list()) {
      if (router.responsibleFor(parent)) {
        queue.add(router.keyOf(parent.getMetadata()));
      }
    }
  }

  /** One run of one parent; whatever happens ends in an outcome for the queue, never in an error. */
  private Mono<Outcome> syncOnce(ParentKey key) {
    return Mono.defer(() -> sync.sync(key))
        .map(resyncAfter -> resyncAfter.map(Outcome::resyncAfter).orElseGet(Outcome::success))
        .onErrorResume(RetryAfterException.class, e -> {
          LOG.debug("{} {}: hook asked to retry {} after {}", KIND, name(), key, e.delay());
          return Mono.just(Outcome.retryAfter(e.delay()));
        })
        .onErrorResume(WriteConflicts::only, e -> {
          LOG.debug("{} {}: a write for {} conflicted with a newer change; syncing again", KIND, name(), key);
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(RelatedObjects.NotSyncedException.class, e -> {
          LOG.debug("{} {}: {}; syncing {} again", KIND, name(), e.getMessage(), key);
          return Mono.just(Outcome.failed());
        })
        .onErrorResume(e -> {
          reportSyncError(key, e);
          return Mono.just(Outcome.failed());
        });
  }

  private void reportSyncError(ParentKey key, Throwable error) {
    String message = error.getMessage() == null ? error.getClass().getName() : error.getMessage();
    LOG.warn("{} {}: sync of {} {} failed: {}", KIND, name(), spec.parent().resource(), key, message);
    LOG.debug("{} {}: sync of {} failed", KIND, name(), key, error);
    parents.get(key.namespace(), key.name()).ifPresent(parent ->
        context.events().record(parent, EventRecorder.Type.Warning, "SyncError", "Sync error: " + message));
  }

  @Override
  public Mono<Void> stop(Duration drainTimeout) {
    return stop(drainTimeout, false);
  }

  @Override
  public Mono<Void> retire(Duration drainTimeout) {
    return stop(drainTimeout, true);
  }

  private Mono<Void> stop(Duration drainTimeout, boolean retire) {
    Objects.requireNonNull(drainTimeout, "drainTimeout");
    return Mono.defer(() -> {
      KeyedWorkQueue<ParentKey> draining;
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
              LOG.warn("{} {}: syncs still running after {} were cancelled", KIND, name(), drainTimeout);
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
   * Removes this controller's finalizer from every parent that carries it; after the queue drained, so no sync
   * adds it back. Failures are logged: the parents stay as they are and can be fixed by hand.
   */
  private Mono<Void> removeFinalizers() {
    InformerLease cache;
    synchronized (lifecycle) {
      cache = parents;
    }
    if (cache == null) {
      return Mono.empty();
    }
    ApiResource parentResource = cache.resource();
    return Flux.fromIterable(cache.list())
        .filter(finalizers::presentOn)
        .flatMap(parent -> finalizers.remove(parentResource, parent)
            .doOnNext(updated -> LOG.info("{} {} is deleted: removed its finalizer from {}", KIND, name(),
                describe(parent)))
            .onErrorResume(e -> {
              LOG.error("{} {} is deleted but its finalizer could not be removed from {}: {}", KIND, name(),
                  describe(parent), e.getMessage());
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

  private static String describe(GenericKubernetesResource object) {
    String namespace = object.getMetadata().getNamespace();
    return object.getKind() + " " + (namespace == null || namespace.isEmpty() ? "" : namespace + "/")
        + object.getMetadata().getName();
  }

  @Override
  public String toString() {
    return KIND + " " + name();
  }
}
