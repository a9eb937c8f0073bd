package dev.metareactor.http;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How the {@link HookClient} connects, retries and protects itself. Immutable; {@link #DEFAULTS} suits a controller
 * manager with up to 64 concurrent calls per hook host, and is what the engine uses (no flag changes it).
 *
 * @param pool connection pooling, per hook host
 * @param retry retries of transient failures inside one call
 * @param breaker the per-endpoint circuit breaker
 * @param maxResponseBytes the largest response body accepted; larger ones fail the call (default 8 MiB, as the
 *     engine's {@code --hook-max-response-size}). It also sets how answers are parsed ({@link AnswerLimits}: at
 *     most one token per 8 bytes of it) and the memory all answers in flight may take together
 *     ({@link #answerMemoryBytes()})
 * @param etagCacheMaxBytes the total heap the ETag cache's parsed answers may take, across all hooks (each weighed
 *     by its tree's estimated size, see {@link WeighedParser}); the entries least likely to be used again go first
 *     (default 256 MiB)
 * @param readTimeout the longest a hook may stay silent while a request is in flight before that attempt is
 *     abandoned as a transient failure and retried; {@link Duration#ZERO} disables it, so only the hook's
 *     {@code timeout} applies (the default: hooks may legitimately compute for most of their timeout)
 * @param headers request headers sent with every call beside the client's own (the engine names the replica that
 *     calls, with {@code --sharding}); none by default
 */
public record HookClientOptions(Pool pool, RetryOptions retry, BreakerOptions breaker, long maxResponseBytes,
    long etagCacheMaxBytes, Duration readTimeout, Map<String, String> headers) {

  public static final HookClientOptions DEFAULTS = new HookClientOptions(Pool.DEFAULTS, RetryOptions.DEFAULTS,
      BreakerOptions.DEFAULTS, 8L << 20, 256L << 20, Duration.ZERO, Map.of());

  /** How many of the largest answers' bytes all answers in flight may take together, trees included. */
  public static final int ANSWER_MEMORY_FACTOR = 16;

  public HookClientOptions {
    Objects.requireNonNull(pool, "pool");
    Objects.requireNonNull(retry, "retry");
    Objects.requireNonNull(breaker, "breaker");
    Objects.requireNonNull(readTimeout, "readTimeout");
    Require.positive(maxResponseBytes, "maxResponseBytes");
    if (maxResponseBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("maxResponseBytes must fit in an array: " + maxResponseBytes);
    }
    Require.positive(etagCacheMaxBytes, "etagCacheMaxBytes");
    if (readTimeout.isNegative()) {
      throw new IllegalArgumentException("readTimeout must not be negative: " + readTimeout);
    }
    headers = Map.copyOf(headers);
  }

  /**
   * The heap all hook answers in flight may take together, beyond {@code 256 KiB} each:
   * {@value #ANSWER_MEMORY_FACTOR} × {@link #maxResponseBytes()} (128 MiB at 8 MiB). What an answer takes is its
   * body's bytes while they are read and parsed, then its tree's estimated size until the work that called is done
   * (see {@link AnswerScope}); an answer that would pass the budget fails at once
   * ({@link HookCallException.Reason#OVERLOADED}) and never waits. A worst-case answer (every byte of the cap, and a
   * tree at the token limit) takes about 10 × {@link #maxResponseBytes()}, so one fits with room for others;
   * answers of real Kubernetes objects take 3 to 10 times their bytes.
   */
  public long answerMemoryBytes() {
    return ANSWER_MEMORY_FACTOR * maxResponseBytes;
  }

  // One option changed by name, the rest kept: HookClientOptions.DEFAULTS.withRetry(fast).withReadTimeout(t).

  public HookClientOptions withPool(Pool pool) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  public HookClientOptions withRetry(RetryOptions retry) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  public HookClientOptions withBreaker(BreakerOptions breaker) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  public HookClientOptions withMaxResponseBytes(long maxResponseBytes) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  public HookClientOptions withEtagCacheMaxBytes(long etagCacheMaxBytes) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  public HookClientOptions withReadTimeout(Duration readTimeout) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  public HookClientOptions withHeaders(Map<String, String> headers) {
    return new HookClientOptions(pool, retry, breaker, maxResponseBytes, etagCacheMaxBytes, readTimeout, headers);
  }

  /**
   * Connection pooling. Pools are per hook host ({@code host:port} and TLS settings); HTTP/1.1 keep-alive connections
   * are reused across calls.
   *
   * @param maxConnectionsPerHost the most connections open to one hook host; size it to the calls that can reach
   *     that host at once (the engine's workers of the controllers using it) — more is waste
   * @param maxPendingAcquires the most calls waiting for a connection to one host; set it to the caller's
   *     concurrency so a burst queues instead of failing, while a runaway caller still gets a clear
   *     {@link HookCallException.Reason#OVERLOADED} error instead of an unbounded queue
   * @param pendingAcquireTimeout how long a call waits for a connection
   * @param maxIdleTime idle connections are closed after this; keep it below the hook servers' keep-alive timeout
   *     (Node.js closed idle sockets after 5 s for years) or a reused connection may be closed under a request
   * @param maxLifeTime connections are replaced after this, so calls spread over new hook pods behind a Service
   * @param connectTimeout how long connecting (TCP, not TLS) may take
   */
  public record Pool(int maxConnectionsPerHost, int maxPendingAcquires, Duration pendingAcquireTimeout,
      Duration maxIdleTime, Duration maxLifeTime, Duration connectTimeout) {

    public static final Pool DEFAULTS = new Pool(64, 1024, Duration.ofSeconds(5), Duration.ofSeconds(4),
        Duration.ofMinutes(5), Duration.ofSeconds(5));

    public Pool {
      Require.positive(maxConnectionsPerHost, "maxConnectionsPerHost");
      Require.positive(maxPendingAcquires, "maxPendingAcquires");
      Require.positive(pendingAcquireTimeout, "pendingAcquireTimeout");
      Require.positive(maxIdleTime, "maxIdleTime");
      Require.positive(maxLifeTime, "maxLifeTime");
      Require.positive(connectTimeout, "connectTimeout");
    }
  }

  /**
   * Retries of transient failures (connection refused or reset, HTTP 500, 502, 503, 504, read timeouts) within one
   * call, with jittered exponential backoff. They all happen inside the hook's timeout; what still fails goes back to
   * the engine's per-object backoff.
   *
   * @param maxAttempts attempts per call, the first included; 1 disables retries
   * @param initialBackoff the wait before the first retry, before jitter
   * @param multiplier how much each wait grows
   * @param jitter the random spread of each wait, 0 (none) to 1 (0..2× the wait)
   * @param maxBackoff the longest wait
   */
  public record RetryOptions(int maxAttempts, Duration initialBackoff, double multiplier, double jitter,
      Duration maxBackoff) {

    public static final RetryOptions DEFAULTS =
        new RetryOptions(3, Duration.ofMillis(100), 2.0, 0.5, Duration.ofSeconds(2));

    public RetryOptions {
      Require.positive(maxAttempts, "maxAttempts");
      Require.positive(initialBackoff, "initialBackoff");
      Require.positive(maxBackoff, "maxBackoff");
      if (!(multiplier >= 1.0)) {
        throw new IllegalArgumentException("multiplier must be at least 1: " + multiplier);
      }
      if (!(jitter >= 0.0 && jitter < 1.0)) {
        throw new IllegalArgumentException("jitter must be in [0, 1): " + jitter);
      }
    }
  }

  /**
   * The circuit breaker of each endpoint: when too many of the last calls failed with an outage (transient failures,
   * attempt timeouts and 429 without a usable {@code Retry-After}; never other 4xx, a 429 with a delay or unusable
   * answers), calls fail fast for a while, then a few trial calls decide whether to close it again.
   *
   * @param failureRateThreshold the failure percentage (1-100) of the sliding window that opens the breaker
   * @param slidingWindowSize how many of the last attempts are counted
   * @param minimumNumberOfCalls attempts needed before the failure rate is judged
   * @param waitInOpenState how long calls fail fast before trial calls are let through
   * @param permittedCallsInHalfOpenState how many trial calls decide whether to close again
   */
  public record BreakerOptions(float failureRateThreshold, int slidingWindowSize, int minimumNumberOfCalls,
      Duration waitInOpenState, int permittedCallsInHalfOpenState) {

    public static final BreakerOptions DEFAULTS = new BreakerOptions(50, 20, 10, Duration.ofSeconds(5), 3);

    public BreakerOptions {
      if (!(failureRateThreshold > 0 && failureRateThreshold <= 100)) {
        throw new IllegalArgumentException("failureRateThreshold must be in (0, 100]: " + failureRateThreshold);
      }
      Require.positive(slidingWindowSize, "slidingWindowSize");
      Require.positive(minimumNumberOfCalls, "minimumNumberOfCalls");
      Require.positive(waitInOpenState, "waitInOpenState");
      Require.positive(permittedCallsInHalfOpenState, "permittedCallsInHalfOpenState");
    }
  }

  /**
   * Checks shared by the records. In their own class so that validating a nested record does not initialize this
   * class, whose {@link #DEFAULTS} needs the nested records' defaults first.
   */
  private static final class Require {
    private Require() {}

    static void positive(long value, String name) {
      if (value <= 0) {
        throw new IllegalArgumentException(name + " must be positive: " + value);
      }
    }

    static void positive(Duration value, String name) {
      Objects.requireNonNull(value, name);
      if (value.isZero() || value.isNegative()) {
        throw new IllegalArgumentException(name + " must be positive: " + value);
      }
    }
  }
}
