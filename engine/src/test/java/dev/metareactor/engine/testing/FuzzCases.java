package dev.metareactor.engine.testing;

import java.util.SplittableRandom;
import java.util.function.ObjIntConsumer;

/**
 * How many generated cases a fuzz test runs, and from which seed: case {@code i} draws everything it generates from
 * a {@link SplittableRandom} seeded with {@code seed + i}, so a run is the same on every machine and every time, and a
 * failing case can be run alone (its message says how). By default {@link #SEED} and the count the test states;
 * {@code -Dmetareactor.fuzz.seed=<n>} and {@code -Dmetareactor.fuzz.cases=<n>} explore further by hand (Surefire
 * passes them to the forked JVM).
 *
 * @param seed the first case's seed
 * @param count how many cases
 */
public record FuzzCases(long seed, int count) {

  /** The seed of every default run. */
  public static final long SEED = 20261126L;

  public FuzzCases {
    if (count < 1) {
      throw new IllegalArgumentException("at least one case, got " + count);
    }
  }

  /** {@code defaultCount} cases from {@link #SEED}, unless the system properties say otherwise. */
  public static FuzzCases of(int defaultCount) {
    return new FuzzCases(Long.getLong("metareactor.fuzz.seed", SEED),
        Integer.getInteger("metareactor.fuzz.cases", defaultCount));
  }

  /**
   * Runs every case; the first that fails ends the run with an {@link AssertionError} naming the case and how to
   * run it alone.
   *
   * @param body one case: its random source and its number
   */
  public void run(ObjIntConsumer<SplittableRandom> body) {
    for (int i = 0; i < count; i++) {
      long caseSeed = seed + i;
      try {
        body.accept(new SplittableRandom(caseSeed), i);
      } catch (Throwable e) { // an exception of the fixture is as much a finding: say which case it was
        throw new AssertionError("case " + i + " of " + count + " (seed " + seed + ") failed; run it alone with"
            + " -Dmetareactor.fuzz.seed=" + caseSeed + " -Dmetareactor.fuzz.cases=1\n" + e.getMessage(), e);
      }
    }
  }
}
