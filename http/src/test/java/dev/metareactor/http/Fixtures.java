package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import java.time.Instant;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Shared test values. */
final class Fixtures {

  static final JsonMapper JSON = JsonMapper.builder().build();
  static final HookIdentity SYNC = new HookIdentity("sync", "test-controller", "CompositeController");
  static final CacheKey ROOT = new CacheKey("Widget", "default", "w1");
  static final Instant START = Instant.parse("2026-11-22T10:00:00Z");

  /** Retries without noticeable waits, so tests do not sleep. */
  static final HookClientOptions.RetryOptions FAST_RETRIES =
      new HookClientOptions.RetryOptions(3, Duration.ofMillis(1), 2.0, 0.5, Duration.ofMillis(5));
  static final HookClientOptions FAST = options(HookClientOptions.Pool.DEFAULTS, FAST_RETRIES,
      HookClientOptions.DEFAULTS.maxResponseBytes(), Duration.ZERO);

  private Fixtures() {}

  /** Defaults but for the pool, the retries, the response size limit and the read timeout. */
  static HookClientOptions options(HookClientOptions.Pool pool, HookClientOptions.RetryOptions retries,
      long maxResponseBytes, Duration readTimeout) {
    return HookClientOptions.DEFAULTS.withPool(pool).withRetry(retries).withMaxResponseBytes(maxResponseBytes)
        .withReadTimeout(readTimeout);
  }

  /** A pool with this many connections and pending acquires per host. */
  static HookClientOptions.Pool pool(int maxConnections, int maxPending) {
    HookClientOptions.Pool defaults = HookClientOptions.Pool.DEFAULTS;
    return new HookClientOptions.Pool(maxConnections, maxPending, Duration.ofSeconds(30), defaults.maxIdleTime(),
        defaults.maxLifeTime(), defaults.connectTimeout());
  }

  /** A default pool whose connections are closed after this idle time or at this age. */
  static HookClientOptions.Pool pool(Duration maxIdleTime, Duration maxLifeTime) {
    HookClientOptions.Pool defaults = HookClientOptions.Pool.DEFAULTS;
    return new HookClientOptions.Pool(defaults.maxConnectionsPerHost(), defaults.maxPendingAcquires(),
        defaults.pendingAcquireTimeout(), maxIdleTime, maxLifeTime, defaults.connectTimeout());
  }

  static JsonNode json(String text) {
    return JSON.readTree(text);
  }

  static JsonNode request() {
    return json("{\"parent\":{\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\"}},\"children\":{}}");
  }

  static HookResponse succeed(Mono<HookResponse> call) {
    return call.block(Duration.ofSeconds(30));
  }

  /** Runs the call and returns its error, which must be a {@link HookCallException}. */
  static HookCallException fail(Mono<HookResponse> call) {
    Throwable error = catchThrowable(() -> call.block(Duration.ofSeconds(30)));
    assertThat(error).isInstanceOf(HookCallException.class);
    return (HookCallException) error;
  }
}
