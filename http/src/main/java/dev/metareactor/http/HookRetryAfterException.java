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
 * The hook answered HTTP 429 Too Many Requests: call it again after {@link #retryAfter()}. With a usable
 * {@code Retry-After} it is not an error in Metacontroller's sense — the engine re-queues the object after the
 * delay without counting a failure or recording a {@code SyncError} event — and it is never counted against the
 * circuit breaker. Without one (no header, {@code 0}, a date in the past, garbage), upstream calls the hook again at
 * once, which turns an overloaded hook into a hot loop (hundreds of calls a second per object); here
 * {@link #retryAfter()} is zero, the call counts as an outage for the circuit breaker (see {@link HookResilience}),
 * and the engine treats it as a failed sync: it waits the object's backoff and counts toward its retry budget.
 * Never retried inside the call.
 */
public final class HookRetryAfterException extends HookCallException {
  private static final long serialVersionUID = 1L;

  /** The most characters of an unusable {@code Retry-After} shown in the message. */
  private static final int SHOWN_HEADER = 40;

  private final Duration retryAfter;

  private HookRetryAfterException(Duration retryAfter, String detail) {
    this(retryAfter, detail, detail, 0, null);
  }

  private HookRetryAfterException(Duration retryAfter, String message, String detail, int attempts,
      CircuitBreaker.@Nullable State state) {
    super(Reason.RETRY_AFTER, message, detail, 429, false, attempts, state, null);
    this.retryAfter = Objects.requireNonNull(retryAfter, "retryAfter");
  }

  /**
   * Reads {@code Retry-After} as upstream does: an HTTP date becomes the seconds from now, rounded up; otherwise a
   * number of seconds; anything else, a date in the past or a negative number is zero.
   */
  static HookRetryAfterException fromHeader(@Nullable String header, Clock clock) {
    Duration retryAfter = parse(header, clock);
    return new HookRetryAfterException(retryAfter, detail(retryAfter, header));
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

  private static String detail(Duration retryAfter, @Nullable String header) {
    if (!retryAfter.isZero()) {
      return "too many requests, retry after " + retryAfter.toSeconds() + " seconds";
    }
    if (header == null) {
      return "too many requests, without Retry-After: retrying with backoff";
    }
    // Shown, but short and printable: it is the hook's text and goes into Events.
    String shown = header.strip().codePoints().limit(SHOWN_HEADER)
        .map(c -> c >= 0x20 && c < 0x7f ? c : '?')
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
    return "too many requests, Retry-After \"" + shown + (header.strip().length() > SHOWN_HEADER ? "..." : "")
        + "\" is no delay: retrying with backoff";
  }

  @Override
  HookRetryAfterException inContext(String hook, int attemptCount, CircuitBreaker.State state) {
    return new HookRetryAfterException(retryAfter, contextMessage(hook, attemptCount, state), detail(),
        attemptCount, state);
  }

  /**
   * How long to wait before calling the hook again for this object; zero when the hook gave no usable delay (then
   * the caller must back off on its own: the hook is overloaded and did not say for how long).
   */
  public Duration retryAfter() {
    return retryAfter;
  }

  /** Whether the hook said when to call again: a positive {@link #retryAfter()}. */
  public boolean hasDelay() {
    return !retryAfter.isZero();
  }
}
