package dev.metareactor.engine.server;

import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.ListenAddress;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.SyncRecordingApi;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.controller.decorator.DecoratorController;
import dev.metareactor.engine.controller.map.MapController;
import dev.metareactor.engine.discovery.Discovery;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.history.SyncHistory;
import dev.metareactor.engine.history.SyncPages;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.ControllerHost;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.informer.SharedInformers;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ApiServerCheck;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.selector.LabelSelector;
import dev.metareactor.engine.shard.Membership;
import dev.metareactor.engine.shard.ShardAssigner;
import dev.metareactor.engine.shard.ShardKeys;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.tracing.Tracing;
import dev.metareactor.engine.tracing.TracingObjectApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.ManagementServer;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The running engine: one connection to the API server ({@link KubeApi}), discovery, the shared informers, the
 * rate-limited API writer, the event recorder, the hook client, the management server ({@code /metrics},
 * {@code /healthz}, {@code /readyz}) and one {@link ControllerHost} per kind of controller object.
 *
 * <p>{@link #start} returns once the management server is bound and hosting has begun; readiness
 * ({@link #isReady()}, {@code /readyz}) follows when discovery and every hosted controller's informers have synced,
 * and goes while an informer has not been able to follow the API server for {@link #STALE_CACHE}.
 * {@link #close()} shuts down gracefully: {@code /readyz} turns 503, hosted controllers stop routing and drain
 * their in-flight syncs for at most {@code --shutdown-timeout}, the lease (if any) is released, and everything
 * else is closed.
 */
public final class Engine implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
  private static final Duration MANAGEMENT_GRACE = Duration.ofSeconds(5);
  /** Connections for the leases' requests (a renewal every 2 s for each lease held). */
  private static final int LEASE_CONNECTIONS = 2;
  /** The leases' own rate limit: far above what they need, so that it never delays a renewal. */
  private static final RateLimit LEASE_RATE = new RateLimit(20, 40);

  /** With {@code --sharding}, the header that names the calling replica's shard on every hook call. */
  public static final String SHARD_HEADER = "Metareactor-Shard";
  /**
   * How long an informer's lists and watches may fail before the engine stops calling itself ready: longer than a
   * watch reconnect or an API server's rolling restart takes, short enough that a probe sees an engine whose caches
   * fell behind (an API server down or unreachable).
   */
  static final Duration STALE_CACHE = Duration.ofSeconds(10);
  private static final ApiResource CRDS = new ApiResource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
      "CustomResourceDefinition", false, Set.of());
  private static final ApiResource API_SERVICES = new ApiResource("apiregistration.k8s.io", "v1", "apiservices",
      "APIService", false, Set.of());

  private final EngineOptions options;
  private final PrometheusMeterRegistry meters;
  private final Discovery discovery;
  private final SharedInformers informers;
  private final List<ControllerHost> hosts;
  private final Optional<LeaderElection> leaderElection;
  /** With {@code --sharding}: this replica's own lease, which it syncs parents only while holding. */
  private final Optional<LeaderElection> shardLease;
  private final ManagementServer management;
  /** What {@link #close()} closes after the hosts, in reverse order of creation. */
  private final Deque<AutoCloseable> resources;
  private final CompletableFuture<String> fatal = new CompletableFuture<>();
  private volatile boolean leading;
  private volatile boolean closing;

  private Engine(EngineOptions options, KubeApi kube, Deque<AutoCloseable> resources) {
    this.options = options;
    this.resources = resources;
    this.meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    resources.push(meters::close);
    bindProcessMetrics();

    String identity = identity();
    Scheduling scheduling = Scheduling.production();
    this.discovery = new Discovery(kube, options.discoveryInterval(), scheduling.work());
    resources.push(discovery);
    this.informers = new SharedInformers(kube, options.cacheFlushInterval(), scheduling.work(), meters,
        options.ssaFieldManager());
    resources.push(informers);
    ApiWriter api = new ApiWriter(kube, options.apiRate(), meters);
    // Leases get a connection pool and a rate limit of their own: renewals queued behind a converge's thousands of
    // writes would miss the renew deadline, and a replica would give up its lease (and its shard) for being busy.
    KubeApi leaseKube = new KubeApi(kube.config(), LEASE_CONNECTIONS);
    resources.push(leaseKube);
    ApiWriter leases = new ApiWriter(leaseKube, LEASE_RATE, meters);
    // And a thread of their own: on a worker of the shared parallel scheduler, a renewal waits behind whatever else
    // runs there (an informer parsing a list of thousands), and a busy replica would miss its renew deadline.
    Scheduler leaseThread = Schedulers.newSingle("leases", true);
    resources.push(leaseThread::dispose);
    Scheduling leaseScheduling = new Scheduling(leaseThread, scheduling.blocking(), scheduling.nanoTime(),
        scheduling.wallClock());
    String shard = options.sharding().enabled()
        ? ShardKeys.requireShardName(options.sharding().shardName().isBlank() ? hostName()
            : options.sharding().shardName())
        : "";
    HookClientOptions hookOptions = HookClientOptions.DEFAULTS.withMaxResponseBytes(options.hookMaxResponseSize());
    HookClient hookClient = HookClient.create(
        shard.isEmpty() ? hookOptions : hookOptions.withHeaders(Map.of(SHARD_HEADER, shard)), meters);
    resources.push(hookClient);
    EventRecorder events = new EventRecorder(api, options.eventRate(), scheduling.wallClock(), identity);
    this.leaderElection = options.leaderElection().enabled() || !shard.isEmpty()
        ? Optional.of(new LeaderElection(leases, options.leaderElection(), identity, leaseScheduling))
        : Optional.empty();
    Sharding sharding = Sharding.disabled();
    ShardAssigner assigner = null;
    if (!shard.isEmpty()) {
      this.shardLease = Optional.of(LeaderElection.forShard(leases, options.leaderElection(), shard, identity,
          leaseScheduling));
      Membership membership = new Membership(shard, LeaderElection.leaseDuration(), scheduling.nanoTime());
      followShards(membership, shardLease.get().namespace(), scheduling);
      assigner = new ShardAssigner(api, informers, membership, fence(leases, membership, shardLease.get().namespace(),
          leaderElection.get()::refusal), ShardAssigner.SETTLE, scheduling.work(), meters);
      resources.push(assigner);
      sharding = Sharding.of(membership, assigner);
    } else {
      this.shardLease = Optional.empty();
    }
    WriteFence fence = writeFence();
    kube.fenceWrites(fence);
    // With --record-syncs, the writes of a recorded sync are added to its record; with --tracing, they are spans.
    // The ring of recent syncs (/debug/syncs) keeps each sync's writes too, from the same records.
    SyncHistory history = new SyncHistory(SyncHistory.DEFAULT_PER_PARENT, SyncHistory.DEFAULT_MAX_BYTES);
    ObjectApi recorded = options.recording().dir().isPresent() || history.on() ? new SyncRecordingApi(api) : api;
    Tracing tracing = Tracing.start(options.tracing());
    resources.push(tracing);
    ObjectApi writes = tracing.on() ? new TracingObjectApi(recorded) : recorded;
    ControllerContext context = new ControllerContext(options, discovery, informers, writes, events, hookClient,
        meters, scheduling, sharding, fence, tracing, history);
    LabelSelector target = LabelSelector.parse(options.targetLabelSelector());
    this.hosts = List.of(new ControllerHost(CompositeController.kind(), context, target),
        new ControllerHost(DecoratorController.kind(), context, target),
        new ControllerHost(MapController.kind(), context, target));
    this.management = ManagementServer.start(new ManagementServer.Options(
        socketAddress(options.metricsAddress()), socketAddress(options.healthProbeAddress())), meters, this::isReady,
        debugPages(new SyncPages(history, scheduling.wallClock())));
    resources.push(() -> management.shutdown(MANAGEMENT_GRACE));
    if (options.profilingAddress().enabled()) {
      resources.push(ProfilingServer.start(socketAddress(options.profilingAddress()).orElseThrow()));
    }

    followDiscoveryChanges(informers);
    if (assigner != null) {
      // Sharded: every replica syncs its share while it holds its own lease; the leader also assigns.
      ShardAssigner sharder = assigner;
      shardLease.get().start(this::lead, () -> fatal("shard lease lost"));
      leaderElection.get().start(sharder::lead, () -> fatal("leader election lost"));
    } else {
      leaderElection.ifPresentOrElse(
          election -> election.start(this::lead, () -> fatal("leader election lost")),
          this::lead);
    }
  }

  /** The ring of recent syncs' pages, as the management server serves them. */
  private static ManagementServer.DebugPages debugPages(SyncPages pages) {
    return path -> {
      SyncPages.Page page = pages.page(path);
      return new ManagementServer.DebugPages.Page(page.status(), page.json());
    };
  }

  /**
   * The lease this replica's writes depend on, judged by its own clock at each write ({@link WriteFence}): with
   * {@code --sharding} its shard's (controllers sync only while holding it; the sharder's relabelling of parents
   * runs in the same process, which cannot hold the leader lease without renewing its shard's on the same
   * schedule), else with {@code --leader-election} the leader lease, else none. The leases' own requests go through
   * a connection of their own and are not fenced.
   */
  private WriteFence writeFence() {
    if (shardLease.isPresent()) {
      return shardLease.get()::refusal;
    }
    return leaderElection.<WriteFence>map(election -> election::refusal).orElse(WriteFence.OPEN);
  }

  /**
   * Ends a shard that is not live before the sharder moves its parents: its lease deleted if it is still the version
   * last seen (the shard renewed it meanwhile: a conflict, and the shard lives); a shard without a lease is over.
   * Only while this replica holds the leader lease by its own clock ({@code leading}): the leases' requests are not
   * fenced like other writes, and a sharder that was stopped past its lease and wakes up sees every other shard's
   * lease unchanged for as long as it slept — it would end them all.
   */
  private static ShardAssigner.Fence fence(ApiWriter api, Membership membership, String namespace,
      WriteFence leading) {
    return shard -> {
      String refusal = leading.refusal();
      if (refusal != null) {
        return Mono.error(new WriteFence.Refused("ending shard " + shard, refusal));
      }
      return membership.lease(shard)
          .map(lease -> api.deleteAt(LeaderElection.LEASES, namespace, lease.name(),
                  Objects.requireNonNull(lease.resourceVersion(), "a cached lease has a resourceVersion"))
              .thenReturn(true)
              .onErrorResume(e -> ApiException.codeOf(e) == 409, e -> Mono.just(false)))
          .orElseGet(() -> Mono.just(true));
    };
  }

  /** Every shard lease of the installation, into the membership, which expires them by the clock every second. */
  private void followShards(Membership membership, String namespace, Scheduling scheduling) {
    InformerLease leases = informers.acquire(LeaderElection.LEASES, namespace,
        ShardKeys.INSTALLATION + "=" + options.leaderElection().id());
    Disposable events = leases.events().subscribe(event -> {
      if (event.type() == ObjectEvent.Type.DELETED) {
        membership.forget(event.object());
      } else {
        membership.observe(event.object());
      }
    });
    Disposable ticks = Flux.interval(Duration.ofSeconds(1), scheduling.work()).subscribe(tick -> membership.tick());
    MetricCatalogue.SHARD_LIVE.gauge(membership, live -> live.live().size()).register(meters);
    resources.push(() -> {
      ticks.dispose();
      events.dispose();
      leases.close();
    });
  }

  /**
   * Connects to the API server (retrying as upstream: 6 attempts, 5 s apart), then starts the engine. Blocks
   * until the management server is bound; call it from the main thread.
   *
   * @throws IllegalArgumentException for options the engine cannot run with
   * @throws IllegalStateException when the API server does not answer
   */
  public static Engine start(EngineOptions options) {
    Objects.requireNonNull(options, "options");
    KubeApi kube = new KubeApi(KubeConfig.load(options.kubeconfig()), options.apiConcurrency());
    Deque<AutoCloseable> resources = new ArrayDeque<>();
    resources.push(kube);
    try {
      ApiServerCheck.standard().await(kube);
      return new Engine(options, kube, resources);
    } catch (RuntimeException e) {
      closeAll(resources);
      throw e;
    }
  }

  /** CRDs and APIServices are what change the served resources at runtime: discovery follows them. */
  private void followDiscoveryChanges(SharedInformers informers) {
    List<InformerLease> sources = List.of(informers.acquireMetadata(CRDS), informers.acquireMetadata(API_SERVICES));
    resources.push(() -> sources.forEach(InformerLease::close));
    Flux<ObjectEvent> changes = Flux.merge(sources.stream().map(InformerLease::events).toList())
        .filter(event -> !event.isResync());
    discovery.start(changes, () -> sources.stream().allMatch(InformerLease::hasSynced));
    // A resource served again (a CRD created again, an aggregated API back): its informers, failing since it went,
    // list now rather than at the end of a backoff that may have grown to 30 s.
    AtomicReference<ResourceMap> served = new AtomicReference<>(ResourceMap.empty());
    Disposable retrying = discovery.snapshots().subscribe(map -> {
      ResourceMap before = served.getAndSet(map);
      map.all().stream().filter(resource -> before.byResource(resource.apiVersion(), resource.resource()).isEmpty())
          .forEach(informers::retryNow);
    });
    resources.push(retrying::dispose);
  }

  private void lead() {
    if (closing) {
      return;
    }
    leading = true;
    hosts.forEach(ControllerHost::start);
  }

  private void fatal(String reason) {
    if (!closing) {
      fatal.complete(reason);
    }
  }

  /**
   * Ready when discovery has synced and, if this replica hosts controllers (it holds the lease, or leader
   * election is off), every host has handled its controller objects and every runnable controller's informers
   * have synced. A standby replica is ready: it is healthy and waiting for the lease. Not ready either while an
   * informer's lists and watches have been failing for longer than {@link #STALE_CACHE}: its cache may be missing
   * changes (but for an informer of a resource discovery no longer serves: {@link #served}). Cheap and
   * non-blocking.
   */
  public boolean isReady() {
    if (closing || !discovery.hasSynced() || !informers.notFollowingFor(STALE_CACHE, this::served).isEmpty()) {
      return false;
    }
    if (!leading) {
      // A standby is ready; a shard waiting for its own lease is not yet.
      return leaderElection.isPresent() && shardLease.isEmpty();
    }
    for (ControllerHost host : hosts) {
      if (!host.isReady()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether discovery serves {@code resource} now. The informer of one it no longer serves (a CRD deleted, an
   * aggregated API gone) fails until it is served again, and its cache misses nothing meanwhile: it does not hold
   * readiness back, no more than a resource not served yet does. (While the API server itself cannot be reached,
   * discovery keeps what it last saw, and every informer counts.)
   */
  private boolean served(ApiResource resource) {
    return discovery.current().byResource(resource.apiVersion(), resource.resource()).isPresent();
  }

  /** Completes with a reason when the engine cannot go on and the process must end (a lost lease). */
  public CompletableFuture<String> fatalError() {
    return fatal;
  }

  /** The registry behind {@code /metrics}. */
  public MeterRegistry meters() {
    return meters;
  }

  /** Where {@code /metrics} is served, if enabled (with the real port when bound to port 0). */
  public Optional<InetSocketAddress> metricsAddress() {
    return management.metricsAddress();
  }

  /** Where {@code /healthz} and {@code /readyz} are served, if enabled. */
  public Optional<InetSocketAddress> healthAddress() {
    return management.healthAddress();
  }

  /** The host of one kind of controller object ({@code CompositeController}, ...). */
  public Optional<ControllerHost> host(String kind) {
    return hosts.stream().filter(host -> host.kind().kind().equals(kind)).findFirst();
  }

  /** Graceful shutdown; blocks for at most about {@code --shutdown-timeout}. Idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      if (closing) {
        return;
      }
      closing = true;
    }
    LOG.info("shutting down: draining in-flight syncs for at most {}", options.shutdownTimeout());
    for (ControllerHost host : hosts) {
      try {
        host.close();
      } catch (RuntimeException e) {
        LOG.warn("stopping the {} host failed", host.kind().kind(), e);
      }
    }
    // Only now give the leases up: a standby (or the sharder, for this shard's parents) must not start writing while
    // this replica still drains.
    shardLease.ifPresent(LeaderElection::close);
    leaderElection.ifPresent(LeaderElection::close);
    closeAll(resources);
    LOG.info("shut down");
  }

  private static void closeAll(Deque<AutoCloseable> resources) {
    while (!resources.isEmpty()) {
      AutoCloseable resource = resources.pop();
      try {
        resource.close();
      } catch (Exception e) {
        LOG.warn("closing {} failed", resource, e);
      }
    }
  }

  private void bindProcessMetrics() {
    new ClassLoaderMetrics().bindTo(meters);
    new JvmMemoryMetrics().bindTo(meters);
    JvmGcMetrics gc = new JvmGcMetrics();
    gc.bindTo(meters);
    resources.push(gc);
    new JvmThreadMetrics().bindTo(meters);
    new ProcessorMetrics().bindTo(meters);
    new UptimeMetrics().bindTo(meters);
  }

  private static Optional<InetSocketAddress> socketAddress(ListenAddress address) {
    return address.enabled() ? Optional.of(new InetSocketAddress(address.bindHost(), address.port()))
        : Optional.empty();
  }

  /** This replica's name in Events and the lease: the host (pod) name and a random suffix, as controller-runtime. */
  private static String identity() {
    return hostName() + "_" + UUID.randomUUID();
  }

  /** The host (pod) name. */
  private static String hostName() {
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (UnknownHostException e) {
        host = "metareactor";
      }
    }
    return host;
  }
}
