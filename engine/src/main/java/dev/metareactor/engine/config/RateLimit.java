package dev.metareactor.engine.config;

/**
 * A token bucket: {@code qps} tokens per second, at most {@code burst} saved up.
 *
 * @param qps sustained rate, greater than zero
 * @param burst bucket size, at least one
 */
public record RateLimit(double qps, int burst) {

  public RateLimit {
    if (!(qps > 0) || Double.isInfinite(qps)) {
      throw new IllegalArgumentException("qps must be a positive number, got " + qps);
    }
    if (burst < 1) {
      throw new IllegalArgumentException("burst must be at least 1, got " + burst);
    }
  }
}
