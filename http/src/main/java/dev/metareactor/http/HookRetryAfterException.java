package dev.metareactor.http;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The hook answered HTTP 429 Too Many Requests: call it again after {@link #retryAfter()}. Not an error in
 * Metacontroller's sense — the engine re-queues the object after the delay without counting a failure or recording
 * a {@code SyncError} event. Never retried inside the call and never counted against the circuit breaker.
 */
public final class HookRetryAfterException extends HookCallException {
  private static final long serialVersionUID = 1L;

  private final Duration retryAfter;

  HookRetryAfterException(Duration retryAfter) {
    this(retryAfter, detail(retryAfter), 0, null);
  }

  private HookRetryAfterException(Duration retryAfter, String message, int attempts,
      CircuitBreaker.@Nullable State state) {
    super(Reason.RETRY_AFTER, message, detail(retryAfter), 429, false, attempts, state, null);
    this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
  }

  /**
   * Reads {@code Retry-After} as upstream does: an HTTP date becomes the seconds from now, rounded up; otherwise a
   * number of seconds; anything else, a date in the past or a negative number is zero.
   */
  static HookRetryAfterException fromHeader(@Nullable String header, Clock clock) {
    return new HookRetryAfterException(parse(header, clock));
  }

  static Duration parse(@Nullable String header, Clock clock) {
    if (header == null || header.isBlank()) {
      return Duration.ZERO;
    }
    String value = header.strip();
    try {
      ZonedDateTime when = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME);
      long millis = Duration.between(clock.instant(), when.toInstant()).toMillis();
      return Duration.ofSeconds(Math.max(0, -Math.floorDiv(-millis, 1000)));
    } catch (DateTimeParseException notADate) {
      try {
        return Duration.ofSeconds(Math.max(0, Long.parseLong(value)));
      } catch (NumberFormatException notANumber) {
        return Duration.ZERO;
      }
    }
  }

  private static String detail(Duration retryAfter) {
    return "too many requests, retry after " + retryAfter.toSeconds() + " seconds";
  }

  @Override
  HookRetryAfterException inContext(String hook, int attemptCount, CircuitBreaker.State state) {
    return new HookRetryAfterException(retryAfter, contextMessage(hook, attemptCount, state), attemptCount, state);
  }

  /** How long to wait before calling the hook again for this object; zero when the hook gave no usable delay. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
