package dev.metareactor.engine.config;

import java.time.Duration;
import java.util.Objects;

/**
 * When a parent's syncs go round in a loop, and how long it is held back ({@code --hot-loop-*}; the guard is
 * {@code controller/HotLoopGuard}).
 *
 * @param repeats how many times the same write within {@code window} is a loop ({@code --hot-loop-repeats}); 0 turns
 *     the guard off
 * @param window how far back writes are compared ({@code --hot-loop-window})
 * @param firstHold how long a parent found in a loop is held back the first time
 * @param maxHold the longest hold, however often the loop is found again ({@code --hot-loop-max-hold})
 */
public record HotLoopSettings(int repeats, Duration window, Duration firstHold, Duration maxHold) {

  /** Five identical writes within a minute; held back 5 s, doubling up to 5 min. */
  public static final HotLoopSettings DEFAULT = new HotLoopSettings(5, Duration.ofSeconds(60), Duration.ofSeconds(5),
      Duration.ofMinutes(5));

  /** No guard. */
  public static final HotLoopSettings OFF = new HotLoopSettings(0, DEFAULT.window, DEFAULT.firstHold,
      DEFAULT.maxHold);

  public HotLoopSettings {
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(firstHold, "firstHold");
    Objects.requireNonNull(maxHold, "maxHold");
    if (repeats < 0 || repeats == 1) {
      throw new IllegalArgumentException("--hot-loop-repeats must be 0 (off) or at least 2, got " + repeats);
    }
    if (window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("--hot-loop-window must be positive, got " + window);
    }
    if (firstHold.isNegative() || firstHold.isZero() || maxHold.compareTo(firstHold) < 0) {
      throw new IllegalArgumentException("--hot-loop-max-hold must be at least the first hold " + firstHold
          + ", got " + maxHold);
    }
  }

  /** Whether the guard is on. */
  public boolean on() {
    return repeats > 0;
  }
}
