package dev.metareactor.engine.config;

import java.time.Duration;
import java.util.Objects;

/**
 * How a failed sync is retried: per parent, an exponential delay from {@code baseDelay} doubling up to
 * {@code maxDelay}; across all parents of a controller, at most {@code overall} retries (client-go's default
 * controller rate limiter: 5ms to 1000s, 10 per second with a burst of 100).
 */
public record RetrySettings(Duration baseDelay, Duration maxDelay, RateLimit overall) {

  public RetrySettings {
    Objects.requireNonNull(baseDelay, "baseDelay");
    Objects.requireNonNull(maxDelay, "maxDelay");
    Objects.requireNonNull(overall, "overall");
    if (baseDelay.isNegative() || baseDelay.isZero()) {
      throw new IllegalArgumentException("retry base delay must be positive, got " + baseDelay);
    }
    if (maxDelay.compareTo(baseDelay) < 0) {
      throw new IllegalArgumentException("retry max delay " + maxDelay + " is below the base delay " + baseDelay);
    }
  }
}
