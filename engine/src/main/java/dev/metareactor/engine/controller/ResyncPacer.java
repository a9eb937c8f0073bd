package dev.metareactor.engine.controller;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * A controller's {@code resyncPeriodSeconds}: adds every key it is responsible for once per period, spread evenly
 * over the period instead of all at once.
 *
 * <p>Why spread: parents created together (an install, a restart's initial sync) would otherwise come due together
 * at every period, and their resyncs run back to back at the workers' full speed. At 10,000 parents that is some
 * 3 seconds every period in which the engine and the hook took both cores of a two-core machine, and the edits
 * made in those seconds took up to 1.3 s to converge instead of 20 ms, the API server starved with them
 * (benchmarks/README.md, "Resyncs spread over their period"). Spread, the same resyncs are a steady share of the
 * machine.
 *
 * <p>The period is cut into slots of {@link #SLOT}, at most {@link #MAX_SLOTS} of them (a longer period has longer
 * slots: the timer wakes at most ten times a second, and for a period of an hour every 6 s). At the start of each
 * period the keys are read once and each goes into the slot of its phase, a stable function of the key's hash, so a
 * key's resyncs are one period apart whatever the others do; each slot's keys are added as the slot begins. The
 * first period begins one period after {@link #start}, as the single timer before it did. What a resync is (its
 * cause, its lane, how late it may run under fresh load) is the work queue's, unchanged.
 *
 * <p>Memory: the keys of the current period (one array), nothing per key beyond it.
 *
 * @param <K> the work-queue key
 */
final class ResyncPacer<K> {

  private static final Logger LOG = LoggerFactory.getLogger(ResyncPacer.class);

  /** How far apart the adds of one period are: the keys of a slot are added together. */
  static final Duration SLOT = Duration.ofMillis(100);
  /** How many slots a period has at most: 600, a minute's worth of {@link #SLOT}s. */
  static final int MAX_SLOTS = 600;

  private final Duration period;
  private final int slots;
  private final Supplier<? extends Collection<K>> keys;
  private final Consumer<K> add;
  private final Scheduler scheduler;

  // Touched only by the timer's ticks, which never overlap: this period's keys in the order of their slots.
  private Object[] ordered = new Object[0];
  private int[] slotOf = new int[0];
  private int next;

  /**
   * @param period the resync period, at least one {@link #SLOT}
   * @param keys the keys to resync, read at the start of each period
   * @param add adds one key to the work queue as a resync
   */
  ResyncPacer(Duration period, Supplier<? extends Collection<K>> keys, Consumer<K> add, Scheduler scheduler) {
    this.period = Objects.requireNonNull(period, "period");
    if (period.compareTo(SLOT) < 0) {
      throw new IllegalArgumentException("period " + period + " is shorter than a slot (" + SLOT + ")");
    }
    this.slots = (int) Math.min(MAX_SLOTS, period.toNanos() / SLOT.toNanos());
    this.keys = Objects.requireNonNull(keys, "keys");
    this.add = Objects.requireNonNull(add, "add");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
  }

  /** Starts the timer; disposing the result stops it. */
  Disposable start() {
    Duration slot = period.dividedBy(slots);
    return Flux.interval(period, slot, scheduler).subscribe(tick -> {
      try {
        slot((int) (tick % slots));
      } catch (RuntimeException e) {
        // A resync timer that stopped would stop every later resync: log, and go on with the next slot.
        LOG.warn("resyncs of slot {} of {} not added", tick % slots, slots, e);
      }
    });
  }

  /** The slot {@code key} is added in, out of {@code slots}: stable for a key, spread evenly over keys. */
  static int phase(Object key, int slots) {
    // Fibonacci hashing: the hash's bits mixed, so that keys with neighbouring hashes land far apart.
    long mixed = (key.hashCode() * 0x9E3779B97F4A7C15L) >>> 32;
    return (int) (mixed * slots >>> 32);
  }

  private void slot(int slot) {
    if (slot == 0) {
      beginPeriod();
    }
    while (next < ordered.length && slotOf[next] <= slot) {
      @SuppressWarnings("unchecked")
      K key = (K) ordered[next];
      ordered[next++] = null; // added: the array no longer keeps it
      add.accept(key);
    }
  }

  private void beginPeriod() {
    Object[] all = keys.get().toArray();
    // Each key's slot and its index in one long (slot in the high half), sorted: the keys in slot order.
    long[] bySlot = new long[all.length];
    for (int i = 0; i < all.length; i++) {
      bySlot[i] = (long) phase(all[i], slots) << 32 | i;
    }
    Arrays.sort(bySlot);
    ordered = new Object[all.length];
    slotOf = new int[all.length];
    for (int i = 0; i < all.length; i++) {
      ordered[i] = all[(int) bySlot[i]];
      slotOf[i] = (int) (bySlot[i] >>> 32);
    }
    next = 0;
  }
}
