package dev.metareactor.http;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retry policy and the per-endpoint circuit breakers of a {@link HookClient}, and the rules for which failures
 * each one reacts to.
 *
 * <ul>
 *   <li>Retried: {@link HookCallException#isTransient() transient} failures — connection refused or reset, closed
 *       before the answer, read timeouts, HTTP 500, 502, 503 and 504. HTTP 500 is counted as transient on purpose
 *       (upstream retries nothing, and the issue lists only 502-504): a hook pod that is restarting or whose
 *       dependency blipped typically answers 500, and a hook is a pure function of its request, so sending the same
 *       request again is safe. Never retried: other 4xx, 429, unusable answers, TLS failures, the deadline.</li>
 *   <li>Counted by the breaker as an outage: transient failures, calls that ran into their deadline (a hung hook
 *       must open the breaker too) and 429 without a usable {@code Retry-After} (an overloaded hook that does not
 *       say for how long must not be called at full speed). Everything else, a 429 with a delay among them, counts
 *       as the hook being reachable.</li>
 * </ul>
 *
 * <p>There is one breaker and one retry instance per endpoint URL (as {@linkplain HookEndpoint#redacted() shown}:
 * without user info or query), named by it, shared by every hook calling that URL. Their Micrometer meters are
 * Resilience4j's: {@code resilience4j_circuitbreaker_state{name=<url>,state=...}},
 * {@code resilience4j_circuitbreaker_calls_seconds}, {@code resilience4j_circuitbreaker_not_permitted_calls_total},
 * {@code resilience4j_retry_calls_total{kind=successful_with_retry|failed_with_retry|...}}.
 */
final class HookResilience {

  private static final Logger LOG = LoggerFactory.getLogger(HookResilience.class);

  private final CircuitBreakerRegistry breakers;
  private final RetryRegistry retries;

  HookResilience(HookClientOptions options, MeterRegistry meters, Clock clock) {
    HookClientOptions.RetryOptions retry = options.retry();
    RetryConfig retryConfig = RetryConfig.custom()
        .maxAttempts(retry.maxAttempts())
        .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(retry.initialBackoff(), retry.multiplier(),
            retry.jitter(), retry.maxBackoff()))
        .retryOnException(HookResilience::worthRetrying)
        .writableStackTraceEnabled(false)
        .build();
    HookClientOptions.BreakerOptions breaker = options.breaker();
    CircuitBreakerConfig breakerConfig = CircuitBreakerConfig.custom()
        .slidingWindow(breaker.slidingWindowSize(), breaker.minimumNumberOfCalls(), SlidingWindowType.COUNT_BASED)
        .failureRateThreshold(breaker.failureRateThreshold())
        .waitDurationInOpenState(breaker.waitInOpenState())
        .permittedNumberOfCallsInHalfOpenState(breaker.permittedCallsInHalfOpenState())
        .recordException(HookResilience::isOutage)
        .writableStackTraceEnabled(false)
        .clock(clock)
        .build();
    this.breakers = CircuitBreakerRegistry.of(breakerConfig);
    this.retries = RetryRegistry.of(retryConfig);
    breakers.getEventPublisher().onEntryAdded(added -> added.getAddedEntry().getEventPublisher()
        .onStateTransition(event -> LOG.warn("circuit breaker of hook {}: {}", event.getCircuitBreakerName(),
            event.getStateTransition())));
    TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(breakers).bindTo(meters);
    TaggedRetryMetrics.ofRetryRegistry(retries).bindTo(meters);
  }

  /** Named by the redacted URL: the name is a metric label and a log argument. */
  CircuitBreaker breaker(HookEndpoint endpoint) {
    return breakers.circuitBreaker(endpoint.redacted());
  }

  Retry retry(HookEndpoint endpoint) {
    return retries.retry(endpoint.redacted());
  }

  static boolean worthRetrying(Throwable error) {
    return error instanceof HookCallException failure && failure.isTransient();
  }

  static boolean isOutage(Throwable error) {
    return error instanceof HookCallException failure
        && (failure.isTransient() || failure.reason() == HookCallException.Reason.TIMEOUT
            || failure instanceof HookRetryAfterException tooMany && !tooMany.hasDelay());
  }
}
