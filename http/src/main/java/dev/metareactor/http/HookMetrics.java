package dev.metareactor.http;

import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The meters of one hook (identity + redacted URL), named as Metacontroller's so dashboards carry over: the
 * {@code HOOK_*} metrics of {@link MetricCatalogue}. With the Prometheus registry they read, for hook type
 * {@code sync}:
 *
 * <ul>
 *   <li>{@code metacontroller_sync_requests_total{code, method, url, controller_name, controller_type}} — every HTTP
 *       answer, retries included (requests that got no answer are not counted, as upstream);</li>
 *   <li>{@code metacontroller_sync_request_duration_histogram_seconds{method, url, controller_name, controller_type}}
 *       — per answered HTTP request, with Prometheus' default buckets as upstream;</li>
 *   <li>{@code metacontroller_sync_in_flight_requests{url, controller_name, controller_type}};</li>
 *   <li>ours: {@code metacontroller_sync_retries_total} (attempts after the first) and
 *       {@code metacontroller_sync_etag_cache_lookups_total{result="hit"|"miss"}} (an answer served from the cache,
 *       or a full 200 body needed).</li>
 * </ul>
 *
 * <p>Circuit breaker and retry state per endpoint come from Resilience4j's own meters
 * ({@code resilience4j_circuitbreaker_state{name=<url>}}, {@code
 * resilience4j_circuitbreaker_not_permitted_calls_total},
 * {@code resilience4j_retry_calls_total}), see {@link HookResilience}.
 *
 * <p>Thread-safe. Meters are registered once per hook and URL; {@link HookClient} shares one instance between
 * hooks with the same identity and URL so the in-flight gauge stays whole.
 */
final class HookMetrics {

  /** Prometheus' default histogram buckets, which upstream's histogram uses. */
  private static final Duration[] BUCKETS = seconds(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10);
  private static final String METHOD = "post";

  private final MeterRegistry registry;
  private final String hookType;
  private final Tags hookTags;
  private final Map<Integer, Counter> requestsByCode = new ConcurrentHashMap<>();
  private final Timer duration;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Counter retries;
  private final Counter etagHits;
  private final Counter etagMisses;

  /**
   * @param url the hook's {@linkplain HookEndpoint#redacted() redacted} URL, the {@code url} label: never user info
   *     or a query, which may hold secrets
   */
  HookMetrics(MeterRegistry registry, HookIdentity identity, String url) {
    this.registry = registry;
    this.hookType = identity.hookType();
    this.hookTags = Tags.of("url", url, "controller_name", identity.controllerName(),
        "controller_type", identity.controllerType());
    this.duration = MetricCatalogue.HOOK_REQUEST_DURATION.forHook(hookType).timer()
        .tags(hookTags).tag("method", METHOD)
        .serviceLevelObjectives(BUCKETS)
        .register(registry);
    MetricCatalogue.HOOK_IN_FLIGHT_REQUESTS.forHook(hookType).gauge(inFlight, AtomicInteger::get)
        .tags(hookTags)
        .register(registry);
    this.retries = MetricCatalogue.HOOK_RETRIES.forHook(hookType).counter()
        .tags(hookTags)
        .register(registry);
    this.etagHits = etagCounter("hit");
    this.etagMisses = etagCounter("miss");
  }

  /** An HTTP request goes out. */
  long requestStarted() {
    inFlight.incrementAndGet();
    return System.nanoTime();
  }

  /**
   * The request ended.
   *
   * @param statusCode the answer's status, 0 when none came
   */
  void requestEnded(long startNanos, int statusCode) {
    inFlight.decrementAndGet();
    // As upstream's promhttp round-tripper: only requests that got an answer are timed and counted.
    if (statusCode != 0) {
      duration.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
      requestsByCode.computeIfAbsent(statusCode, this::requestCounter).increment();
    }
  }

  void retried() {
    retries.increment();
  }

  void etagLookup(boolean hit) {
    (hit ? etagHits : etagMisses).increment();
  }

  private Counter requestCounter(int code) {
    return MetricCatalogue.HOOK_REQUESTS.forHook(hookType).counter()
        .tags(hookTags).tag("code", Integer.toString(code)).tag("method", METHOD)
        .register(registry);
  }

  private Counter etagCounter(String result) {
    return MetricCatalogue.HOOK_ETAG_CACHE_LOOKUPS.forHook(hookType).counter()
        .tags(hookTags).tag("result", result)
        .register(registry);
  }

  private static Duration[] seconds(double... values) {
    Duration[] durations = new Duration[values.length];
    for (int i = 0; i < values.length; i++) {
      durations[i] = Duration.ofNanos(Math.round(values[i] * 1e9));
    }
    return durations;
  }
}
