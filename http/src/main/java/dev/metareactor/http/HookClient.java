package dev.metareactor.http;

import dev.metareactor.http.tls.TlsMaterials;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.ssl.SslContext;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Calls hooks: one per process, shared by every controller. Owns the one Reactor Netty {@link HttpClient} and its
 * connection pools, the ETag cache, the per-endpoint circuit breakers and retry policies, the memory budget of
 * answers in flight ({@link HookClientOptions#answerMemoryBytes()}) and the hook metrics.
 *
 * <pre>{@code
 * HookClient client = HookClient.create(HookClientOptions.DEFAULTS, meterRegistry);
 * Hook sync = client.hook(WebhookSpec.fromJson(webhookJson).withAuth(auth),
 *     new HookIdentity("sync", "my-controller", "CompositeController"));
 * sync.call(request, new CacheKey("MyKind", "default", "my-object"))
 *     .map(HookResponse::body) ...
 * }</pre>
 *
 * <p>Thread-safe. {@link #hook} does the expensive work (TLS contexts, meters) once per hook; calls are cheap.
 */
public final class HookClient implements AutoCloseable {

  private final HookClientOptions options;
  private final MeterRegistry meters;
  private final Clock clock;
  /** Writes requests, reads answers under {@link AnswerLimits}. */
  private final ObjectMapper json;
  private final ConnectionProvider connections;
  private final HttpClient http;
  private final EtagCache etags;
  private final HookResilience resilience;
  private final AnswerMemory answerMemory;
  private final Map<MetricsKey, HookMetrics> metrics = new ConcurrentHashMap<>();

  /** By the shown URL: two URLs that differ only in their secrets are one hook to the meters. */
  private record MetricsKey(HookIdentity identity, String url) {}

  private HookClient(HookClientOptions options, MeterRegistry meters, Clock clock) {
    this.options = options;
    this.meters = meters;
    this.clock = clock;
    this.json = JsonMapper.builder(JsonFactory.builder()
        .streamReadConstraints(AnswerLimits.constraints(options.maxResponseBytes())).build()).build();
    this.answerMemory = new AnswerMemory(options.answerMemoryBytes());
    answerMemory.bindTo(meters);
    HookClientOptions.Pool pool = options.pool();
    this.connections = ConnectionProvider.builder("metareactor-hooks")
        .maxConnections(pool.maxConnectionsPerHost())
        .pendingAcquireMaxCount(pool.maxPendingAcquires())
        .pendingAcquireTimeout(pool.pendingAcquireTimeout())
        .maxIdleTime(pool.maxIdleTime())
        .maxLifeTime(pool.maxLifeTime())
        .evictInBackground(pool.maxIdleTime())
        // A pool per hook host that ever existed would otherwise stay for the life of the process.
        .disposeInactivePoolsInBackground(Duration.ofMinutes(5), Duration.ofMinutes(10))
        .build();
    // Reactor Netty's own single resend when a pooled connection turns out closed before the request got out is
    // kept (the default): hooks are idempotent, and that race with a server's keep-alive timeout is not a failure.
    HttpClient client = HttpClient.create(connections)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
            pool.connectTimeout().toMillis()))
        .keepAlive(true)
        .headers(headers -> {
          headers
              .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
              .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON)
              .set(HttpHeaderNames.USER_AGENT, "metareactor");
          options.headers().forEach(headers::set);
        });
    if (!options.readTimeout().isZero()) {
      client = client.responseTimeout(options.readTimeout());
    }
    this.http = client;
    this.etags = new EtagCache(options.etagCacheMaxBytes(), clock);
    this.resilience = new HookResilience(options, meters, clock);
  }

  /** A client on the system clock. */
  public static HookClient create(HookClientOptions options, MeterRegistry meters) {
    return create(options, meters, Clock.systemUTC());
  }

  /**
   * A client whose time-based decisions (ETag expiry, circuit breaker open time, {@code Retry-After} dates) follow
   * {@code clock}; tests move it by hand.
   */
  public static HookClient create(HookClientOptions options, MeterRegistry meters, Clock clock) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(meters, "meters");
    Objects.requireNonNull(clock, "clock");
    return new HookClient(options, meters, clock);
  }

  /**
   * Prepares a hook: builds its TLS context (for {@code https} endpoints), its headers and its meters. Call it when
   * a controller starts, not per call, and not on an event loop: reading PEM and building the TLS context takes a
   * few milliseconds. Hooks with the same endpoint share its circuit breaker.
   *
   * @throws InvalidWebhookException when the TLS materials cannot be used
   */
  public Hook hook(WebhookSpec spec, HookIdentity identity) {
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(identity, "identity");
    HttpClient client = http;
    if (spec.endpoint().secure()) {
      SslContext context = sslContext(spec.tls());
      client = client.secure(ssl -> ssl.sslContext(context));
    }
    if (spec.effectiveAuth().isPresent()) {
      String authorization = spec.effectiveAuth().get().headerValue();
      client = client.headers(headers -> headers.set(HttpHeaderNames.AUTHORIZATION, authorization));
    }
    HookMetrics hookMetrics = metrics.computeIfAbsent(new MetricsKey(identity, spec.endpoint().redacted()),
        key -> new HookMetrics(meters, key.identity(), key.url()));
    return new Hook(spec, identity, client, json, hookMetrics, resilience, etags, options.maxResponseBytes(),
        answerMemory, clock);
  }

  /** The budget of answers in flight; for tests. */
  AnswerMemory answerMemory() {
    return answerMemory;
  }

  /** How many answers the ETag cache holds, after pending evictions; for tests. */
  long cachedAnswers() {
    return etags.estimatedSize();
  }

  /** Closes the connection pools. Calls still in flight fail. Non-blocking. */
  @Override
  public void close() {
    connections.dispose();
  }

  private static SslContext sslContext(TlsMaterials tls) {
    try {
      return tls.clientContext();
    } catch (IllegalArgumentException e) {
      throw new InvalidWebhookException(e.getMessage(), e);
    }
  }
}
