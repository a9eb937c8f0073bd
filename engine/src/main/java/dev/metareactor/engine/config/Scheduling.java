package dev.metareactor.engine.config;

import java.time.Clock;
import java.util.Objects;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where the engine's work runs and which time it reads: chosen once, by the engine's assembly, and handed to
 * everything below it, so that a test can run a hosted controller, its queue and its timers in virtual time (a
 * {@code VirtualTimeScheduler} for both schedulers and its clock for both clocks) instead of sleeping.
 * The thread map in {@code server/package-info.java} says what runs where in production.
 *
 * @param work non-blocking work: syncs (the work queues' workers), timers (resync periods, polls), informer
 *     serial workers, discovery, leader election
 * @param blocking work that may block a thread: building, starting and stopping controllers (which may read
 *     Secrets and build TLS contexts), rebuilding a hook after its Secret changed
 * @param nanoTime monotonic nanoseconds, for durations: queue metrics, retry budgets, lease expiry
 * @param wallClock the time of day, for what is written down: Event timestamps, lease renew times
 */
public record Scheduling(Scheduler work, Scheduler blocking, LongSupplier nanoTime, Clock wallClock) {

  public Scheduling {
    Objects.requireNonNull(work, "work");
    Objects.requireNonNull(blocking, "blocking");
    Objects.requireNonNull(nanoTime, "nanoTime");
    Objects.requireNonNull(wallClock, "wallClock");
  }

  /** Reactor's shared parallel and bounded-elastic schedulers, {@link System#nanoTime()} and UTC. */
  public static Scheduling production() {
    return new Scheduling(Schedulers.parallel(), Schedulers.boundedElastic(), System::nanoTime, Clock.systemUTC());
  }
}
