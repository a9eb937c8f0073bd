package dev.metareactor.engine.hook;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The hook asked to be called again later (HTTP 429 with a usable {@code Retry-After}): the parent is re-queued
 * after {@link #delay()}, always positive, without counting an error or recording a {@code SyncError} event. A 429
 * that does not say when is not one of these but a failure (see {@link WebhookCaller}).
 */
public final class RetryAfterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Duration delay;

  /**
   * @throws IllegalArgumentException when the delay is not positive: "call again at once" is no delay, and re-queued
   *     without one the object would be synced in a hot loop against a hook that is overloaded
   */
  public RetryAfterException(Duration delay, @Nullable String message) {
    super(message, null, false, false);
    this.delay = Objects.requireNonNull(delay, "delay");
    if (delay.isZero() || delay.isNegative()) {
      throw new IllegalArgumentException("a retry-after delay must be positive, got " + delay);
    }
  }

  public Duration delay() {
    return delay;
  }
}
