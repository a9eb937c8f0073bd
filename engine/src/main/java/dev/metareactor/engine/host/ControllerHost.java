package dev.metareactor.engine.host;

import dev.metareactor.engine.api.ChildStatusAnnotation;
import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.api.DeleteParentAnnotation;
import dev.metareactor.engine.api.RecordSyncsAnnotation;
import dev.metareactor.engine.api.ShadowAnnotations;
import dev.metareactor.engine.api.WorkersAnnotation;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.KeyedWorkQueue;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.queue.WorkQueueOptions;
import dev.metareactor.engine.selector.LabelSelector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Hosts the controllers one kind of controller object declares: watches the objects (only those whose labels
 * match {@code --target-label-selector}), starts a {@link HostedController} for each, replaces it when the
 * object's {@code spec} changes (labels, annotations and status do not count, as upstream), and stops it when the
 * object is deleted or stops matching the target selector.
 *
 * <p>Lifecycle changes run through a {@link KeyedWorkQueue} keyed by controller name, like every other sync in the
 * engine: the informer callback only enqueues the name, changes to one controller are serialized, and changes to
 * different controllers proceed side by side (a controller draining its syncs does not hold up the others).
 *
 * <p>Events on the controller object, with upstream's reasons and messages: {@code Starting}, {@code Started},
 * {@code Stopping}, {@code Stopped} (Normal) and {@code CreateError} (Warning, for an object that cannot be hosted
 * as written; it is reported once per spec and does not affect other controllers).
 */
public final class ControllerHost implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ControllerHost.class);
  /** Lifecycle changes of different controllers run side by side, up to this many at once. */
  private static final int LIFECYCLE_WORKERS = 4;

  /**
   * What runs for one controller object.
   *
   * @param object the object as it was when the controller was built (Events go on it once the object is gone)
   * @param spec the object's spec the controller was built from
   * @param controller the controller, or {@code null} when the spec could not be hosted
   * @param starting the subscription to its start (a disposed one when there is no controller)
   */
  private record Hosted(KubeObject object, JsonNode spec, @Nullable HostedController controller,
      Disposable starting) {}

  private final ControllerKind kind;
  private final ControllerContext context;
  private final LabelSelector target;
  private final KeyedWorkQueue<String> queue;
  private final Map<String, Hosted> hosted = new ConcurrentHashMap<>();
  /** Guards the fields below against {@link #close()} racing the discovery of the controller resource. */
  private final Object lifecycle = new Object();
  private @Nullable InformerLease objects;
  private @Nullable Disposable watching;
  private @Nullable Disposable routing;
  private @Nullable Disposable working;
  private boolean closed;

  /**
   * @param target only objects whose labels match are hosted ({@code --target-label-selector})
   */
  public ControllerHost(ControllerKind kind, ControllerContext context, LabelSelector target) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.context = Objects.requireNonNull(context, "context");
    this.target = Objects.requireNonNull(target, "target");
    this.queue = new KeyedWorkQueue<>(
        new WorkQueueOptions(kind.hostName(), kind.hostName(), LIFECYCLE_WORKERS, context.options().retry()),
        context.scheduling(), context.meters());
  }

  public ControllerKind kind() {
    return kind;
  }

  /**
   * Starts watching controller objects as soon as discovery serves their resource (the CRDs may be installed after
   * the engine starts). Non-blocking.
   */
  public void start() {
    AtomicBoolean warned = new AtomicBoolean();
    Disposable subscription = context.discovery().snapshots()
        .doOnNext(map -> {
          if (map.byResource(kind.apiVersion(), kind.resource()).isEmpty() && warned.compareAndSet(false, true)) {
            LOG.warn("the {} resource ({} in {}) is not served: install the CRDs (manifests/production); "
                + "waiting for it", kind.kind(), kind.resource(), kind.apiVersion());
          }
        })
        .mapNotNull(map -> map.byResource(kind.apiVersion(), kind.resource()).orElse(null))
        .next()
        .publishOn(context.scheduling().blocking())
        .subscribe(this::watch, error -> LOG.error("{} host: discovery failed", kind.kind(), error));
    synchronized (lifecycle) {
      watching = subscription;
    }
  }

  private void watch(ApiResource resource) {
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      objects = context.informers().acquire(resource);
      routing = objects.events().subscribe(this::route,
          error -> LOG.error("{} host: event stream failed", kind.kind(), error));
      working = queue.process((name, causes) -> reconcile(name)).subscribe();
      LOG.info("watching {} objects{}", kind.kind(), target.isEmpty() ? "" : " labelled " + target);
    }
  }

  /** Informer thread: only enqueue. */
  private void route(ObjectEvent event) {
    queue.add(event.object().name(), event.trigger());
  }

  /**
   * Whether every controller object seen so far has been handled and every controller that can run has synced
   * its caches. Controllers waiting for a resource that is not served do not hold readiness back: they may wait
   * forever, and the process is otherwise ready. Cheap and non-blocking.
   */
  public boolean isReady() {
    InformerLease lease;
    synchronized (lifecycle) {
      lease = objects;
    }
    if (lease == null || !lease.hasSynced() || !queue.isQuiet()) {
      return false;
    }
    for (Hosted entry : hosted.values()) {
      if (entry.controller() != null) {
        HostedController.Phase phase = entry.controller().phase();
        if (phase == HostedController.Phase.NEW || phase == HostedController.Phase.SYNCING) {
          return false;
        }
      }
    }
    return true;
  }

  /** The phase of the controller hosted for the object {@code name}, if one is. */
  public Optional<HostedController.Phase> phase(String name) {
    return Optional.ofNullable(hosted.get(name)).map(Hosted::controller).map(HostedController::phase);
  }

  /** Runs on a queue worker, one at a time per controller name. */
  private Mono<Outcome> reconcile(String name) {
    KubeObject object = Objects.requireNonNull(objects, "the queue works once the objects are watched")
        .get("", name).orElse(null);
    Hosted current = hosted.get(name);
    if (object == null || !target.matches(object.labels())) {
      if (current == null) {
        return Mono.empty();
      }
      hosted.remove(name);
      // Deleted: retire (its finalizers come off its parents). Merely no longer targeted: stop, and leave the
      // parents to whichever engine the object is now for.
      return stop(name, current, object, object == null).then(Mono.empty());
    }
    JsonNode spec = specOf(object);
    if (current != null && current.spec().equals(spec)) {
      return Mono.empty();
    }
    Mono<Void> stopOld = current == null ? Mono.empty() : stop(name, current, object, false);
    return stopOld
        .then(Mono.fromRunnable(() -> create(name, object, spec)).subscribeOn(context.scheduling().blocking()))
        .then(Mono.empty());
  }

  private void create(String name, KubeObject object, JsonNode spec) {
    HostedController controller;
    try {
      controller = kind.factory().create(object, context);
    } catch (RuntimeException e) {
      String problem = messageOf(e);
      LOG.error("{} {}: cannot create controller: {}", kind.kind(), name, problem);
      context.events().record(object, EventRecorder.Type.Warning, "CreateError",
          "Cannot create new controller: " + problem);
      hosted.put(name, new Hosted(object, spec, null, Disposables.disposed()));
      return;
    }
    synchronized (lifecycle) {
      if (closed) {
        return; // close() has stopped every controller already; this one never starts
      }
      LOG.info("Starting {} {}", kind.kind(), name);
      context.events().record(object, EventRecorder.Type.Normal, "Starting", "Starting controller: " + name);
      hosted.put(name, new Hosted(object, spec, controller, start(name, object, controller)));
    }
  }

  private Disposable start(String name, KubeObject object, HostedController controller) {
    return controller.start().subscribe(
        ignored -> { },
        error -> {
          String problem = messageOf(error);
          LOG.error("{} {}: cannot start controller: {}", kind.kind(), name, problem);
          context.events().record(object, EventRecorder.Type.Warning, "CreateError",
              "Cannot create new controller: " + problem);
          controller.stop(Duration.ZERO).subscribe();
        },
        () -> {
          LOG.info("Started {} {}", kind.kind(), name);
          context.events().record(object, EventRecorder.Type.Normal, "Started", "Started controller: " + name);
        });
  }

  /**
   * Stops (or retires) one controller and records its Events on {@code object}, its latest state, or, when it is
   * gone from the cache ({@code null}), on the state the controller was built from.
   */
  private Mono<Void> stop(String name, Hosted entry, @Nullable KubeObject object, boolean retire) {
    if (entry.controller() == null) {
      return Mono.empty();
    }
    entry.starting().dispose();
    KubeObject about = object != null ? object : entry.object();
    LOG.info("Stopping {} {}", kind.kind(), name);
    context.events().record(about, EventRecorder.Type.Normal, "Stopping", "Stopping controller: " + name);
    Duration drain = context.options().shutdownTimeout();
    return (retire ? entry.controller().retire(drain) : entry.controller().stop(drain))
        .doOnSuccess(ignored -> {
          LOG.info("Stopped {} {}", kind.kind(), name);
          context.events().record(about, EventRecorder.Type.Normal, "Stopped", "Stopped controller: " + name);
        });
  }

  /**
   * What a hosted controller is built from: its spec, its {@link WorkersAnnotation}, its
   * {@link DeleteGuardAnnotation}, its {@link DeleteParentAnnotation}, its {@link CrossNamespaceChildren}, its
   * {@link RecordSyncsAnnotation}, its {@link ChildStatusAnnotation} and its {@link ShadowAnnotations}; a change
   * restarts it.
   */
  private static JsonNode specOf(KubeObject object) {
    ObjectNode built = KubeJson.nodes().objectNode();
    built.set("spec", object.toTree().path("spec"));
    built.put("workers", object.annotations().get(WorkersAnnotation.KEY));
    built.put("deleteGuard", object.annotations().get(DeleteGuardAnnotation.KEY));
    built.put("deleteParent", object.annotations().get(DeleteParentAnnotation.KEY));
    built.put("crossNamespaceChildren", object.annotations().get(CrossNamespaceChildren.KEY));
    built.put("recordSyncs", object.annotations().get(RecordSyncsAnnotation.KEY));
    built.put("writeChildStatus", object.annotations().get(ChildStatusAnnotation.KEY));
    for (String hook : ShadowAnnotations.HOOKS) {
      built.put("shadow-" + hook, object.annotations().get(ShadowAnnotations.key(hook)));
    }
    return built;
  }

  private static String messageOf(Throwable error) {
    return error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
  }

  /**
   * Stops watching and stops every hosted controller, letting each drain its in-flight syncs for at most
   * {@code --shutdown-timeout}. Blocks until done; call it from the main thread.
   */
  @Override
  public void close() {
    InformerLease lease;
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
      dispose(watching);
      dispose(routing);
      lease = objects;
    }
    queue.shutDown(Duration.ZERO).block();
    dispose(working);
    List<Mono<Void>> stops = new ArrayList<>();
    hosted.forEach((name, entry) -> {
      if (entry.controller() != null) {
        entry.starting().dispose();
        stops.add(entry.controller().stop(context.options().shutdownTimeout())
            .doOnSuccess(ignored -> LOG.info("Stopped {} {}", kind.kind(), name)));
      }
    });
    hosted.clear();
    Flux.merge(stops).then().block(context.options().shutdownTimeout().plusSeconds(10));
    if (lease != null) {
      lease.close();
    }
  }

  private static void dispose(@Nullable Disposable disposable) {
    if (disposable != null) {
      disposable.dispose();
    }
  }
}
