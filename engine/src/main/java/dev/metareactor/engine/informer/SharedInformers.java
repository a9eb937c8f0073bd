package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;

/**
 * One informer per resource for the whole process, shared by every hosted controller that needs it and
 * reference-counted: {@link #acquire} starts it on first use, the last {@link InformerLease#close()} stops it.
 * {@link #acquireOne} does the same for a single named object (a Secret a webhook's credentials come from): a
 * watch with a field selector, so the engine never caches every Secret of the cluster to follow one.
 *
 * <p>An informer watches all namespaces unless it was asked for one ({@link #acquire(ApiResource, String, String)}:
 * each namespace is then an informer of its own), replays its cache to its handlers every {@code resync} (the
 * {@code --cache-flush-interval}), and keeps the {@link InformerIndexes}. A failing list or watch (a resource
 * that went away, missing RBAC) is logged and retried by the informer; it never throws into the caller.
 *
 * <p>Each informer of a whole resource is measured while it runs: {@code metareactor_informer_objects} (the objects
 * its cache holds: what the engine's memory grows with) and {@code metareactor_informer_expired_watches_total} (watches
 * the API server ended with 410 Gone, each followed by a relist), tagged with the resource and {@code content}
 * ({@code objects}, or {@code metadata} for a metadata-only informer), the label selector and the namespace
 * ({@code ""}: every namespace).
 */
public final class SharedInformers implements Informers, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SharedInformers.class);

  private final KubeApi api;
  private final Duration resync;
  private final Scheduler scheduler;
  private final MeterRegistry meters;
  private final String fieldManager;
  private final Map<Target, Shared> informers = new HashMap<>();

  /**
   * What one informer watches: a whole resource ({@code name == null}), the objects of it a label selector selects,
   * or one object of it.
   */
  private record Target(ApiResource resource, String namespace, @Nullable String name, String labelSelector,
      Informer.Content content) {
    @Override
    public String toString() {
      return (name != null ? resource + " " + KubeObject.namespacedName(namespace, name)
          : namespace.isEmpty() ? resource.toString() : resource + " in " + namespace)
          + (labelSelector.isEmpty() ? "" : " (" + labelSelector + ")");
    }
  }

  /**
   * @param scheduler where each informer takes the worker its changes and events run on
   * @param meters where each informer's meters are registered while it runs
   * @param fieldManager the engine's server-side apply field manager: what it applied is kept of each cached object
   *     ({@link KubeObject#appliedFields})
   */
  public SharedInformers(KubeApi api, Duration resync, Scheduler scheduler, MeterRegistry meters,
      String fieldManager) {
    this.api = Objects.requireNonNull(api, "api");
    this.resync = Objects.requireNonNull(resync, "resync");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.meters = Objects.requireNonNull(meters, "meters");
    this.fieldManager = Objects.requireNonNull(fieldManager, "fieldManager");
  }

  /** A lease on the informer of {@code resource}, starting it if nobody holds one yet. */
  @Override
  public synchronized InformerLease acquire(ApiResource resource) {
    Objects.requireNonNull(resource, "resource");
    return lease(new Target(resource, "", null, "", Informer.Content.OBJECTS));
  }

  /**
   * A lease on the informer of the objects of {@code resource} in {@code namespace} ({@code ""}: every namespace)
   * that {@code labelSelector} selects (the API's syntax), with the indexes of a whole resource's informer.
   */
  @Override
  public synchronized InformerLease acquire(ApiResource resource, String namespace, String labelSelector) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(labelSelector, "labelSelector");
    return lease(new Target(resource, resource.namespaced() ? namespace : "", null, labelSelector,
        Informer.Content.OBJECTS));
  }

  /**
   * A lease on an informer that keeps only the metadata of {@code resource}'s objects and none of the indexes: for
   * following changes (its {@link InformerLease#events}) of objects that are large and never read themselves.
   */
  @Override
  public synchronized InformerLease acquireMetadata(ApiResource resource) {
    Objects.requireNonNull(resource, "resource");
    return lease(new Target(resource, "", null, "", Informer.Content.METADATA));
  }

  /** A metadata-only informer of the objects of {@code resource} that {@code labelSelector} selects. */
  @Override
  public synchronized InformerLease acquireMetadata(ApiResource resource, String labelSelector) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(labelSelector, "labelSelector");
    return lease(new Target(resource, "", null, labelSelector, Informer.Content.METADATA));
  }

  /**
   * A lease on an informer of the one object {@code namespace/name} of {@code resource} (it need not exist yet),
   * starting it if nobody holds one yet. Only {@link InformerLease#get}, {@link InformerLease#events} and
   * {@link InformerLease#hasSynced} apply to it: it keeps none of the owner and orphan indexes.
   */
  @Override
  public synchronized InformerLease acquireOne(ApiResource resource, String namespace, String name) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    return lease(new Target(resource, resource.namespaced() ? namespace : "", name, "", Informer.Content.OBJECTS));
  }

  private Lease lease(Target target) {
    Shared shared = informers.computeIfAbsent(target, this::start);
    shared.holders++;
    return new Lease(shared);
  }

  /**
   * The informers (by what they watch) whose lists and watches have been failing for longer than {@code limit}:
   * caches that may be missing changes (the API server is down or unreachable). Empty when all follow it.
   */
  public List<String> notFollowingFor(Duration limit) {
    return notFollowingFor(limit, resource -> true);
  }

  /** The same, of the informers of resources {@code counted} accepts only. */
  public synchronized List<String> notFollowingFor(Duration limit, Predicate<ApiResource> counted) {
    long now = System.nanoTime();
    return informers.values().stream()
        .filter(shared -> counted.test(shared.target.resource())
            && shared.informer.notFollowingFor(now) > limit.toNanos())
        .map(shared -> shared.target.toString())
        .toList();
  }

  /**
   * Makes the informers of {@code resource} (group, version and resource name) that are failing retry now instead
   * of at the end of their backoff: discovery serves it again.
   */
  public synchronized void retryNow(ApiResource resource) {
    informers.values().stream()
        .filter(shared -> sameResource(shared.target.resource(), resource))
        .forEach(shared -> shared.informer.retryNow());
  }

  private static boolean sameResource(ApiResource a, ApiResource b) {
    return a.group().equals(b.group()) && a.version().equals(b.version()) && a.resource().equals(b.resource());
  }

  /** How many informers run now (for tests and metrics). */
  public synchronized int running() {
    return informers.size();
  }

  private Shared start(Target target) {
    boolean indexed = target.name() == null && target.content() == Informer.Content.OBJECTS;
    Informer informer = new Informer(api, target.resource(), target.namespace(), target.name(),
        target.labelSelector(), resync,
        indexed ? InformerIndexes.all() : Map.of(), target.content(),
        target.content() == Informer.Content.OBJECTS ? fieldManager : null, scheduler, scheduler);
    informer.start();
    LOG.debug("started informer for {}", target);
    List<Meter> measured = target.name() != null ? List.of() : measure(target, informer);
    return new Shared(target, informer, measured);
  }

  private List<Meter> measure(Target target, Informer informer) {
    Tags tags = Tags.of("resource", target.resource().toString(),
        "content", target.content().name().toLowerCase(Locale.ROOT), "selector", target.labelSelector(),
        "namespace", target.namespace());
    return List.of(
        MetricCatalogue.INFORMER_OBJECTS.gauge(informer, Informer::size).tags(tags).register(meters),
        MetricCatalogue.INFORMER_EXPIRED_WATCHES.functionCounter(informer, Informer::expired).tags(tags)
            .register(meters),
        MetricCatalogue.INFORMER_SILENT_WATCHES.functionCounter(informer, Informer::silent).tags(tags)
            .register(meters));
  }

  private synchronized void release(Shared shared) {
    if (--shared.holders == 0) {
      informers.remove(shared.target);
      stop(shared);
      LOG.debug("stopped informer for {}", shared.target);
    }
  }

  private void stop(Shared shared) {
    shared.informer.stop();
    shared.meters.forEach(meters::remove);
  }

  @Override
  public synchronized void close() {
    informers.values().forEach(this::stop);
    informers.clear();
  }

  private static final class Shared {
    final Target target;
    final ApiResource resource;
    final Informer informer;
    final List<Meter> meters;
    int holders;

    Shared(Target target, Informer informer, List<Meter> meters) {
      this.target = target;
      this.resource = target.resource();
      this.informer = informer;
      this.meters = meters;
    }
  }

  private final class Lease implements InformerLease {
    private final Shared shared;
    private final AtomicBoolean closed = new AtomicBoolean();

    Lease(Shared shared) {
      this.shared = shared;
    }

    @Override
    public ApiResource resource() {
      return shared.resource;
    }

    @Override
    public boolean hasSynced() {
      return shared.informer.hasSynced();
    }

    @Override
    public @Nullable String resourceVersion() {
      return shared.informer.resourceVersion();
    }

    @Override
    public Optional<KubeObject> get(String namespace, String name) {
      return Optional.ofNullable(shared.informer.get(namespace, name));
    }

    @Override
    public List<KubeObject> controlledBy(String controllerUid) {
      return shared.informer.byIndex(InformerIndexes.CONTROLLER_UID, controllerUid);
    }

    @Override
    public List<KubeObject> orphans(String namespace) {
      return shared.informer.byIndex(InformerIndexes.ORPHANS_BY_NAMESPACE, namespace);
    }

    @Override
    public List<KubeObject> labelled(String key, String value) {
      return shared.informer.byIndex(InformerIndexes.BY_LABEL, InformerIndexes.labelKey(key, value));
    }

    @Override
    public List<KubeObject> inNamespace(String namespace) {
      return shared.informer.byIndex(InformerIndexes.NAMESPACE, namespace);
    }

    @Override
    public List<KubeObject> list() {
      return shared.informer.list();
    }

    @Override
    public Flux<ObjectEvent> events() {
      return Flux.create(sink -> {
        Disposable handler = shared.informer.addHandler(sink::next);
        sink.onDispose(handler);
      }, FluxSink.OverflowStrategy.BUFFER);
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        release(shared);
      }
    }
  }
}
