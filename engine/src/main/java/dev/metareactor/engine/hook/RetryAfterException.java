package dev.metareactor.engine.hook;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The hook asked to be called again later (HTTP 429 with {@code Retry-After}): the parent is re-queued after
 * {@link #delay()} without counting an error or recording a {@code SyncError} event.
 */
public final class RetryAfterException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Duration delay;

  public RetryAfterException(Duration delay, @Nullable String message) {
    super(message, null, false, false);
    this.delay = Objects.requireNonNull(delay, "delay");
  }

  public Duration delay() {
    return delay;
  }
}
