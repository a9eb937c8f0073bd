package dev.metareactor.engine.informer;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The silence of one watch: how long since its last line, and a signal once that is longer than allowed ({@link
 * Informer#WATCH_SILENCE} says why a watch is then given up).
 *
 * <p>Why not Reactor's {@code timeout}: it keeps time per line, scheduling a task on the timer and cancelling the
 * previous one for every line (a lock, an insert into the scheduler's queue and a removal from it, and a wake-up
 * when the timer's thread sleeps), and a watch carries every change of its resource. Here a line only writes the
 * time, and one timer per silence period reads it: when it fires early because a line came meanwhile, it is set
 * again for the end of the new silence.
 */
final class WatchSilence {

  private final Scheduler timer;
  private final long allowedNanos;
  /** When the last line arrived (or the watch began), by {@link #timer}'s clock. */
  private volatile long lastLineAt;

  /** A watch beginning now, given up after {@code allowed} without a line; {@code timer} keeps the time. */
  WatchSilence(Scheduler timer, Duration allowed) {
    this.timer = Objects.requireNonNull(timer, "timer");
    this.allowedNanos = allowed.toNanos();
    this.lastLineAt = now();
  }

  /** A line arrived: the silence starts again. */
  void heard() {
    lastLineAt = now();
  }

  /** Emits once no line has arrived for the allowed time; cancel it when the watch ends otherwise. */
  Mono<Long> ended() {
    return Mono.defer(() -> Mono.delay(Duration.ofNanos(Math.max(0, lastLineAt + allowedNanos - now())), timer))
        .repeat()
        .filter(tick -> now() - lastLineAt >= allowedNanos)
        .next();
  }

  private long now() {
    return timer.now(TimeUnit.NANOSECONDS);
  }
}
