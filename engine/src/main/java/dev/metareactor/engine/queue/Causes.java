package dev.metareactor.engine.queue;

import java.util.List;
import java.util.Objects;

/**
 * The causes of one run of a key: every distinct {@link Trigger} of the adds it coalesced, the first
 * {@link #MAX_KEPT} of them kept and the rest counted.
 *
 * @param kept the first distinct causes, in the order they came
 * @param dropped how many more adds came whose cause differed from each kept one (an add equal to a kept cause is
 *     not counted: it is that cause again)
 */
public record Causes(List<Trigger> kept, int dropped) {

  /** How many distinct causes a waiting key keeps. */
  public static final int MAX_KEPT = 4;

  /** A run without a recorded cause (a one-shot sync, a preview). */
  public static final Causes NONE = new Causes(List.of(), 0);

  public Causes {
    kept = List.copyOf(Objects.requireNonNull(kept, "kept"));
    if (kept.size() > MAX_KEPT) {
      throw new IllegalArgumentException("at most " + MAX_KEPT + " causes are kept, got " + kept.size());
    }
    if (dropped < 0) {
      throw new IllegalArgumentException("dropped must not be negative, got " + dropped);
    }
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
