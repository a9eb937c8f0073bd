package dev.metareactor.engine.cel;

import java.time.Duration;

/**
 * What one evaluation of a CEL hook may spend: an evaluation over either fails with a {@link CelHookException} (the
 * sync's {@code SyncError}) instead of holding a worker.
 *
 * @param costLimit cost units one evaluation may spend: one per sub-expression evaluated, plus one per element of
 *     each list or map and one per 64 characters of each string a sub-expression yields (see {@link CelBudget})
 * @param timeout how long one evaluation may run
 */
public record CelLimits(long costLimit, Duration timeout) {

  /**
   * The cost limit when the hook sets none: ten million units. A {@code map} over a list pays for each partial list it
   * builds (cel-java reports each twice), so over 1,000 elements it costs about a million.
   */
  public static final long DEFAULT_COST_LIMIT = 10_000_000;

  /** The timeout when the hook sets none. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

  /** The defaults. */
  public static final CelLimits DEFAULT = new CelLimits(DEFAULT_COST_LIMIT, DEFAULT_TIMEOUT);

  public CelLimits {
    if (costLimit < 1) {
      throw new IllegalArgumentException("costLimit must be at least 1, got " + costLimit);
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be positive, got " + timeout);
    }
  }
}
