package dev.metareactor.engine.queue;

import dev.metareactor.engine.config.RetrySettings;
import dev.metareactor.engine.ratelimit.TokenBucket;
import java.util.function.LongSupplier;

/**
 * The delay before a failed key runs again: the larger of its own exponential backoff and the wait for a token
 * of the queue's overall retry bucket (client-go's {@code MaxOf(ItemExponentialFailureRateLimiter,
 * BucketRateLimiter)}). Every call takes a token, also when the per-key delay is the larger one, as client-go
 * does; so the bucket bounds how often the queue as a whole retries.
 *
 * <p>Thread-safe. The per-key failure count lives in the queue's key state, not here.
 */
final class RetryRateLimiter {

  private final long baseNanos;
  private final long maxNanos;
  private final TokenBucket overall;

  RetryRateLimiter(RetrySettings settings, LongSupplier nanoClock) {
    this.baseNanos = KeyedWorkQueue.saturatedNanos(settings.baseDelay());
    this.maxNanos = KeyedWorkQueue.saturatedNanos(settings.maxDelay());
    this.overall = new TokenBucket(settings.overall(), nanoClock);
  }

  /** The delay in nanoseconds for a key that had failed {@code previousFailures} times before this failure. */
  long delayNanos(int previousFailures) {
    long bucketWait = overall.reserve().toNanos();
    return Math.max(backoffNanos(previousFailures), bucketWait);
  }

  /** {@code base * 2^previousFailures}, capped at the maximum. */
  long backoffNanos(int previousFailures) {
    double backoff = baseNanos * Math.pow(2, previousFailures);
    return backoff >= maxNanos ? maxNanos : (long) backoff;
  }
}
