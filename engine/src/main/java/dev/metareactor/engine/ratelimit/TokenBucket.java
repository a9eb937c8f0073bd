package dev.metareactor.engine.ratelimit;

import dev.metareactor.engine.config.RateLimit;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A token bucket that never blocks: {@link #reserve()} takes a token now or books the next free one and says
 * how long to wait for it, so callers delay with a timer instead of parking a thread (client-go's rate limiter
 * semantics: a sustained rate with a burst).
 *
 * <p>Thread-safe; reservations are served in call order.
 */
public final class TokenBucket {

  private final double nanosPerToken;
  private final double capacity;
  private final LongSupplier nanoClock;
  private double tokens;
  private long updatedAt;

  public TokenBucket(RateLimit limit, LongSupplier nanoClock) {
    Objects.requireNonNull(limit, "limit");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.nanosPerToken = 1e9 / limit.qps();
    this.capacity = limit.burst();
    this.tokens = capacity;
    this.updatedAt = nanoClock.getAsLong();
  }

  public TokenBucket(RateLimit limit) {
    this(limit, System::nanoTime);
  }

  /** Takes one token, returning how long the caller must wait before using it (zero if available now). */
  public synchronized Duration reserve() {
    long now = nanoClock.getAsLong();
    tokens = Math.min(capacity, tokens + (now - updatedAt) / nanosPerToken);
    updatedAt = now;
    tokens -= 1;
    if (tokens >= 0) {
      return Duration.ZERO;
    }
    return Duration.ofNanos((long) Math.ceil(-tokens * nanosPerToken));
  }
}
