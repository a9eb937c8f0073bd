package dev.metareactor.engine.queue;

import java.time.Duration;
import java.util.Objects;

/**
 * How one run of a key ended, as reported to {@link KeyedWorkQueue#done(Object, Outcome)}. What the queue does
 * with each kind is part of the contract written on {@link KeyedWorkQueue}.
 *
 * @param kind what happened
 * @param after for {@link Kind#SUCCESS}: run the key again after this delay (a hook's {@code resyncAfterSeconds}),
 *     zero for no resync; for {@link Kind#RETRY_AFTER}: run the key again after this delay, always positive;
 *     always zero for {@link Kind#FAILED} and {@link Kind#CANCELLED}
 */
public record Outcome(Kind kind, Duration after) {

  /** The ways a run can end. */
  public enum Kind {
    /** The key converged: its failure count is reset (client-go's {@code Forget}). */
    SUCCESS,
    /** The run failed: the key is retried after the rate limiter's delay (client-go's {@code AddRateLimited}). */
    FAILED,
    /**
     * The key must run again after {@link Outcome#after()}, which is not an error (a hook's HTTP 429 with a usable
     * {@code Retry-After}): the failure count is left as it is. The delay is positive: a run told to come back
     * without a delay ended {@link #FAILED}, see {@link KeyedWorkQueue}.
     */
    RETRY_AFTER,
    /**
     * The run was abandoned before it finished (its subscription was cancelled): the key runs again as soon as
     * a worker is free, unless the queue is shutting down.
     */
    CANCELLED
  }

  private static final Outcome SUCCESS = new Outcome(Kind.SUCCESS, Duration.ZERO);
  private static final Outcome FAILED = new Outcome(Kind.FAILED, Duration.ZERO);
  private static final Outcome CANCELLED = new Outcome(Kind.CANCELLED, Duration.ZERO);

  public Outcome {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(after, "after");
    if (after.isNegative()) {
      throw new IllegalArgumentException("after must not be negative, got " + after);
    }
    if ((kind == Kind.FAILED || kind == Kind.CANCELLED) && !after.isZero()) {
      throw new IllegalArgumentException(kind + " takes no delay, got " + after);
    }
    if (kind == Kind.RETRY_AFTER && after.isZero()) {
      throw new IllegalArgumentException("RETRY_AFTER needs a positive delay (without one the run FAILED)");
    }
  }

  /** The key converged and needs no resync. */
  public static Outcome success() {
    return SUCCESS;
  }

  /** The key converged and should be synced again after {@code delay} (zero: no resync). */
  public static Outcome resyncAfter(Duration delay) {
    return new Outcome(Kind.SUCCESS, delay);
  }

  /** The run failed and the key is retried with backoff. */
  public static Outcome failed() {
    return FAILED;
  }

  /** The key runs again after {@code delay} (positive) without counting a failure. */
  public static Outcome retryAfter(Duration delay) {
    return new Outcome(Kind.RETRY_AFTER, delay);
  }

  /** The run was abandoned before it finished. */
  public static Outcome cancelled() {
    return CANCELLED;
  }
}
