package dev.metareactor.http;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * Why a hook call failed. Every error a {@link Hook#call} Mono signals is one of these; a hook asking to be called
 * later (HTTP 429) is the subclass {@link HookRetryAfterException}, which the engine re-queues without counting an
 * error when it says when (a usable {@code Retry-After}).
 *
 * <p>The message names the hook and ends with what resilience did about it, for example {@code sync hook
 * http://hooks.default:80/sync: unsupported status code: 503 body: restarting (attempts: 3, circuit breaker:
 * CLOSED)}.
 */
public sealed class HookCallException extends RuntimeException permits HookRetryAfterException {
  private static final long serialVersionUID = 1L;

  /** The kind of failure. */
  public enum Reason {
    /** The hook answered with a status other than 200 (and 429). */
    STATUS,
    /** No answer: connection refused, reset or closed early, a read timeout, DNS failure. */
    TRANSPORT,
    /** The call's deadline (the webhook's {@code timeout}) passed, retries included. */
    TIMEOUT,
    /** The TLS handshake failed: untrusted certificate, wrong host name, client certificate refused. */
    TLS,
    /** The hook answered 200 (or 304/412) but the answer cannot be used: too large, not JSON, nothing cached. */
    INVALID_RESPONSE,
    /** The hook's circuit breaker is open: the call was not attempted. */
    CIRCUIT_OPEN,
    /** Too many calls were already waiting for a connection to this hook. */
    OVERLOADED,
    /** HTTP 429: see {@link HookRetryAfterException}. */
    RETRY_AFTER
  }

  private final Reason reason;
  private final String detail;
  private final int statusCode;
  private final boolean transientFailure;
  private final int attempts;
  private final CircuitBreaker.@Nullable State breakerState;

  /**
   * The failure of one attempt, before retries and the breaker had their say.
   *
   * @param statusCode the HTTP status, 0 when there was no answer
   * @param transientFailure whether another attempt may succeed (and whether it counts against the circuit breaker)
   */
  HookCallException(Reason reason, String detail, int statusCode, boolean transientFailure,
      @Nullable Throwable cause) {
    this(reason, detail, detail, statusCode, transientFailure, 0, null, cause);
  }

  HookCallException(Reason reason, String message, String detail, int statusCode, boolean transientFailure,
      int attempts, CircuitBreaker.@Nullable State breakerState, @Nullable Throwable cause) {
    // No stack trace: the assembly site says nothing about a remote failure, and failing fast must be cheap.
    super(message, cause, false, false);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.detail = Objects.requireNonNull(detail, "detail");
    this.statusCode = statusCode;
    this.transientFailure = transientFailure;
    this.attempts = attempts;
    this.breakerState = breakerState;
  }

  /** The same failure, told from the caller's side: which hook, after how many attempts, in which breaker state. */
  HookCallException inContext(String hook, int attemptCount, CircuitBreaker.State state) {
    return new HookCallException(reason, contextMessage(hook, attemptCount, state), detail, statusCode,
        transientFailure, attemptCount, state, getCause());
  }

  final String contextMessage(String hook, int attemptCount, CircuitBreaker.State state) {
    return hook + ": " + detail + " (attempts: " + attemptCount + ", circuit breaker: " + state + ")";
  }

  public Reason reason() {
    return reason;
  }

  /** What went wrong, without the hook name and resilience summary. */
  public String detail() {
    return detail;
  }

  /** The HTTP status the hook answered, if it answered. */
  public OptionalInt statusCode() {
    return statusCode == 0 ? OptionalInt.empty() : OptionalInt.of(statusCode);
  }

  /** Whether the failure was worth retrying (connection errors, 500, 502, 503, 504, read timeouts). */
  public boolean isTransient() {
    return transientFailure;
  }

  /** How many HTTP requests the call made; 0 when the circuit breaker refused it. */
  public int attempts() {
    return attempts;
  }

  /** The endpoint's circuit breaker state when the call failed. */
  public Optional<CircuitBreaker.State> breakerState() {
    return Optional.ofNullable(breakerState);
  }
}
