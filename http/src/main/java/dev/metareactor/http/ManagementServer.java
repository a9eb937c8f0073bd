package dev.metareactor.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The process's management endpoints, on the addresses Metacontroller uses: {@code /metrics} (Prometheus text format,
 * {@code --metrics-address}, {@code :9999} by default) and {@code /healthz} + {@code /readyz}
 * ({@code --health-probe-bind-address}, {@code :8081}). Either can be disabled ({@code 0} on the command line, an
 * empty address here); given the same non-zero address, one server answers all three paths.
 *
 * <ul>
 *   <li>{@code /healthz}: 200 {@code ok} while the process serves HTTP at all (liveness).</li>
 *   <li>{@code /readyz}: 200 {@code ok} when the supplied check says ready (the engine reports "caches synced"), 503
 *       otherwise and from the moment {@link #shutdown} begins, so traffic drains before the process goes.</li>
 * </ul>
 *
 * <p>The readiness check runs on an event loop for every probe: it must be a cheap, non-blocking read of state.
 *
 * <p>With {@link DebugPages} ({@link #start(Options, PrometheusMeterRegistry, BooleanSupplier, DebugPages)}), the
 * metrics address also serves {@code GET /debug/...}: read-only JSON pages the process builds (off the event loop).
 */
public final class ManagementServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ManagementServer.class);
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
  private static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);

  /**
   * Where to listen.
   *
   * @param metricsAddress where {@code /metrics} is served; empty disables it
   * @param healthAddress where {@code /healthz} and {@code /readyz} are served; empty disables them
   */
  public record Options(Optional<InetSocketAddress> metricsAddress, Optional<InetSocketAddress> healthAddress) {

    /** Upstream's defaults: {@code :9999} and {@code :8081} on all interfaces. */
    public static final Options DEFAULTS = new Options(Optional.of(new InetSocketAddress(9999)),
        Optional.of(new InetSocketAddress(8081)));

    public Options {
      Objects.requireNonNull(metricsAddress, "metricsAddress");
      Objects.requireNonNull(healthAddress, "healthAddress");
    }

    boolean shared() {
      return metricsAddress.isPresent() && metricsAddress.equals(healthAddress)
          && metricsAddress.get().getPort() != 0;
    }
  }

  /** Read-only JSON pages under {@code /debug/}, served on the metrics address. */
  @FunctionalInterface
  public interface DebugPages {

    /** No pages: {@code /debug/...} is not served. */
    DebugPages NONE = path -> new Page(404, "{\"error\":\"no debug pages\"}");

    /**
     * The page at {@code path} ({@code debug/...}, without the leading slash or a query). Called on a blocking-safe
     * thread.
     */
    Page page(String path);

    /** A page: its HTTP status and its JSON. */
    record Page(int status, String json) {

      public Page {
        Objects.requireNonNull(json, "json");
      }
    }
  }

  private static final String JSON = "application/json";

  private final PrometheusMeterRegistry registry;
  private final BooleanSupplier readiness;
  private final DebugPages debug;
  private volatile boolean shuttingDown;
  private final List<DisposableServer> servers = new ArrayList<>();
  private final Optional<InetSocketAddress> metricsAddress;
  private final Optional<InetSocketAddress> healthAddress;

  private ManagementServer(Options options, PrometheusMeterRegistry registry, BooleanSupplier readiness,
      DebugPages debug) {
    this.registry = registry;
    this.readiness = readiness;
    this.debug = debug;
    try {
      if (options.shared()) {
        DisposableServer both = bind(options.metricsAddress().get(), true, true);
        this.metricsAddress = Optional.of(address(both));
        this.healthAddress = metricsAddress;
      } else {
        this.metricsAddress = options.metricsAddress().map(address -> address(bind(address, true, false)));
        this.healthAddress = options.healthAddress().map(address -> address(bind(address, false, true)));
      }
    } catch (RuntimeException e) {
      servers.forEach(DisposableServer::disposeNow);
      throw e;
    }
  }

  /**
   * Binds the enabled endpoints. Blocks until bound; call it from the main thread, not an event loop.
   *
   * @param readiness whether the process is ready to work; cheap and non-blocking
   * @throws RuntimeException when an address cannot be bound (nothing stays bound then)
   */
  public static ManagementServer start(Options options, PrometheusMeterRegistry registry, BooleanSupplier readiness) {
    return start(options, registry, readiness, DebugPages.NONE);
  }

  /**
   * Binds the enabled endpoints, {@code /debug/...} served by {@code debug} on the metrics address. Blocks until
   * bound; call it from the main thread, not an event loop.
   *
   * @throws RuntimeException when an address cannot be bound (nothing stays bound then)
   */
  public static ManagementServer start(Options options, PrometheusMeterRegistry registry, BooleanSupplier readiness,
      DebugPages debug) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(readiness, "readiness");
    Objects.requireNonNull(debug, "debug");
    return new ManagementServer(options, registry, readiness, debug);
  }

  /** Where {@code /metrics} is served (with the real port when bound to port 0). */
  public Optional<InetSocketAddress> metricsAddress() {
    return metricsAddress;
  }

  /** Where {@code /healthz} and {@code /readyz} are served. */
  public Optional<InetSocketAddress> healthAddress() {
    return healthAddress;
  }

  /**
   * Graceful shutdown: {@code /readyz} turns 503 at once, then the servers stop accepting and wait up to
   * {@code grace} for requests in flight. Blocks; call it from a shutdown hook, not an event loop.
   */
  public void shutdown(Duration grace) {
    Objects.requireNonNull(grace, "grace");
    shuttingDown = true;
    for (DisposableServer server : servers) {
      try {
        server.disposeNow(grace);
      } catch (IllegalStateException e) {
        LOG.warn("management server on {} did not stop within {}", server.address(), grace);
      }
    }
  }

  /** {@link #shutdown} with a 10 second grace period. */
  @Override
  public void close() {
    shutdown(DEFAULT_GRACE);
  }

  private DisposableServer bind(InetSocketAddress address, boolean metrics, boolean health) {
    DisposableServer server = HttpServer.create()
        .bindAddress(() -> address)
        .channelGroup(new DefaultChannelGroup(GlobalEventExecutor.INSTANCE))
        .route(routes -> routes(routes, metrics, health))
        .bindNow();
    servers.add(server);
    LOG.info("serving {} on {}", metrics && health ? "/metrics, /healthz and /readyz" : metrics ? "/metrics"
        : "/healthz and /readyz", server.address());
    return server;
  }

  private void routes(HttpServerRoutes routes, boolean metrics, boolean health) {
    if (metrics) {
      // Scraping walks every meter: off the event loop, so probes on the same loop are not held up.
      routes.get("/metrics", (request, response) -> response
          .header(HttpHeaderNames.CONTENT_TYPE, PROMETHEUS_TEXT)
          .sendString(Mono.fromCallable(registry::scrape).subscribeOn(Schedulers.boundedElastic())));
      routes.route(request -> request.method().equals(HttpMethod.GET) && request.path().startsWith("debug/"),
          (request, response) -> Mono.fromCallable(() -> debug.page(request.path()))
              .subscribeOn(Schedulers.boundedElastic())
              .flatMap(page -> response.status(page.status()).header(HttpHeaderNames.CONTENT_TYPE, JSON)
                  .sendString(Mono.just(page.json())).then()));
    }
    if (health) {
      routes.get("/healthz", (request, response) -> response.sendString(Mono.just("ok")));
      routes.get("/readyz", (request, response) -> {
        boolean ready = !shuttingDown && ready();
        return response.status(ready ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE)
            .sendString(Mono.just(ready ? "ok" : "not ready"));
      });
    }
  }

  private boolean ready() {
    try {
      return readiness.getAsBoolean();
    } catch (RuntimeException e) {
      LOG.warn("readiness check failed", e);
      return false;
    }
  }

  private static InetSocketAddress address(DisposableServer server) {
    return (InetSocketAddress) server.address();
  }
}
