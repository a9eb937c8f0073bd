package dev.metareactor.engine.controller;

import dev.metareactor.engine.history.ParentRef;
import dev.metareactor.engine.history.SyncEntry;
import dev.metareactor.engine.history.SyncHistory;
import dev.metareactor.engine.queue.Causes;
import dev.metareactor.engine.queue.Outcome;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One controller's share of the engine's ring of recent syncs ({@link SyncHistory}): each run of a key, summed up
 * from its {@link SyncRecord} and its causes when it ends.
 */
final class RecentSyncs {

  private final SyncHistory history;
  private final Clock clock;
  private final String kind;
  private final String controller;

  /**
   * @param kind the controller object's kind
   * @param controller its name
   */
  RecentSyncs(SyncHistory history, Clock clock, String kind, String controller) {
    this.history = Objects.requireNonNull(history, "history");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.kind = Objects.requireNonNull(kind, "kind");
    this.controller = Objects.requireNonNull(controller, "controller");
  }

  boolean on() {
    return history.on();
  }

  /** Now, for a run's start. */
  long now() {
    return clock.millis();
  }

  /** Keeps the run of {@code key} that started at {@code startedAtMillis} for {@code causes}. */
  void add(SyncKey key, Causes causes, long startedAtMillis, SyncRecord record, Outcome outcome,
      @Nullable Throwable error) {
    List<SyncEntry.Write> writes = new ArrayList<>();
    for (SyncRecord.Write write : record.writes()) {
      writes.add(new SyncEntry.Write(write.verb(), write.resource().kind(), write.namespace(), write.name(),
          write.result()));
    }
    String ended = switch (outcome.kind()) {
      case SUCCESS -> outcome.after().isZero() ? "success" : "resync after " + outcome.after().toSeconds() + " s";
      case FAILED -> "failed";
      case RETRY_AFTER -> "retry after " + outcome.after().toMillis() + " ms";
      case CANCELLED -> "cancelled";
    };
    history.add(ParentRef.of(kind, controller, key.namespace(), key.name()),
        new SyncEntry(startedAtMillis, causes.kept(), causes.dropped(), causes.waitedNanos() / 1000,
            record.hookCalls(), record.hookNanos() / 1000, record.answerBytes(), writes, record.writesLeftOut(),
            ended, error == null ? null : error.getMessage() == null ? error.getClass().getName()
                : error.getMessage()));
  }
}
