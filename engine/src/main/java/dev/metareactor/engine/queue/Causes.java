package dev.metareactor.engine.queue;

import java.util.List;
import java.util.Objects;

/**
 * The causes of one run of a key: every distinct {@link Trigger} of the adds it coalesced, the first
 * {@link #MAX_KEPT} of them kept and the rest counted; and how long the key waited in the queue for it.
 *
 * @param kept the first distinct causes, in the order they came
 * @param dropped how many more adds came whose cause differed from each kept one (an add equal to a kept cause is
 *     not counted: it is that cause again)
 * @param waitedNanos how long the key waited, from the first add this run coalesced (a delayed add counts from when
 *     it came due) to the run's start; 0 when unknown
 */
public record Causes(List<Trigger> kept, int dropped, long waitedNanos) {

  /** How many distinct causes a waiting key keeps. */
  public static final int MAX_KEPT = 4;

  /** A run without a recorded cause (a one-shot sync, a preview). */
  public static final Causes NONE = new Causes(List.of(), 0, 0);

  public Causes {
    kept = List.copyOf(Objects.requireNonNull(kept, "kept"));
    if (kept.size() > MAX_KEPT) {
      throw new IllegalArgumentException("at most " + MAX_KEPT + " causes are kept, got " + kept.size());
    }
    if (dropped < 0) {
      throw new IllegalArgumentException("dropped must not be negative, got " + dropped);
    }
    if (waitedNanos < 0) {
      throw new IllegalArgumentException("waitedNanos must not be negative, got " + waitedNanos);
    }
  }

  /** Causes of a run whose wait is not known. */
  public Causes(List<Trigger> kept, int dropped) {
    this(kept, dropped, 0);
  }

  /** Readable, for a log line: {@code spec changed; child changed: ConfigMap default/x-0 (created) (+2 more)}. */
  @Override
  public String toString() {
    if (kept.isEmpty()) {
      return "no recorded cause";
    }
    StringBuilder text = new StringBuilder();
    for (Trigger trigger : kept) {
      if (!text.isEmpty()) {
        text.append("; ");
      }
      text.append(trigger);
    }
    return dropped == 0 ? text.toString() : text.append(" (+").append(dropped).append(" more)").toString();
  }
}
