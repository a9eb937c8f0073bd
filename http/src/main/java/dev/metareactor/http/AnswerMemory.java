package dev.metareactor.http;

import dev.metareactor.http.HookCallException.Reason;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The heap that hook answers in flight take together, across every hook of a {@link HookClient}: the bytes of each
 * answer's body while it is received and parsed, then the estimated size of its parsed tree (see
 * {@link WeighedParser}) until the work that called the hook is done with it ({@link AnswerScope}), or until the
 * call ends when no scope holds it.
 *
 * <p>Each answer takes what it needs as it grows, chunk by chunk; the first {@value #FREE_PER_ANSWER} bytes of
 * each answer are not counted. An answer that needs more than the budget has left <b>fails at once</b> with
 * {@link Reason#OVERLOADED} and lets go of what it had (its body is not read further): nothing waits, so no event
 * loop is ever blocked and no queue of waiting answers grows, and the sync that called it backs off and tries again
 * like after any failure. Why the free part: the answers that blow up are the large ones, and a flood of them
 * must not fail the small answers of every other controller; so the budget bounds the large answers, and the small
 * ones are bounded by how many calls can be in flight at once (the workers).
 *
 * <p>Thread-safe and non-blocking: one atomic counter.
 */
final class AnswerMemory {

  /** The part of each answer that is not counted: what a typical answer takes, tree included. */
  static final long FREE_PER_ANSWER = 256L << 10;
  /** Taken from the budget at least this much at a time, so that a growing answer touches the counter rarely. */
  private static final long CHUNK = 64L << 10;

  private final long limit;
  private final AtomicLong used = new AtomicLong();
  /** What all answers in flight take, free parts included: the gauge. */
  private final AtomicLong held = new AtomicLong();
  private final LongAdder refused = new LongAdder();

  /** @param limit the most bytes all answers in flight may take beyond their free part */
  AnswerMemory(long limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("the answer memory limit must be positive: " + limit);
    }
    this.limit = limit;
  }

  /**
   * Registers {@code metareactor_hook_answers_bytes} (the estimated heap hook answers in flight take now, free parts
   * included), {@code metareactor_hook_answers_limit_bytes} (the budget beyond the free parts) and
   * {@code metareactor_hook_answers_refused_total} (answers failed for want of budget).
   */
  void bindTo(MeterRegistry meters) {
    MetricCatalogue.HOOK_ANSWERS.gauge(held, AtomicLong::get).register(meters);
    MetricCatalogue.HOOK_ANSWERS_LIMIT.gauge(this, AnswerMemory::limit).register(meters);
    MetricCatalogue.HOOK_ANSWERS_REFUSED.functionCounter(refused, LongAdder::sum).register(meters);
  }

  /** What a new answer will take; close it when the answer is gone. */
  Charge open() {
    return new Charge();
  }

  /** What all answers in flight take now, free parts included. */
  long held() {
    return held.get();
  }

  /** Bytes taken now, beyond the free parts. */
  long used() {
    return used.get();
  }

  long limit() {
    return limit;
  }

  private void take(long bytes) {
    long now;
    do {
      now = used.get();
      if (now + bytes > limit) {
        refused.increment();
        throw new HookCallException(Reason.OVERLOADED, "response exceeds the memory budget of hook answers ("
            + limit + " bytes for all answers in flight, " + now + " in use): refused, retried later", 200, false,
            null);
      }
    } while (!used.compareAndSet(now, now + bytes));
  }

  /** Thrown into the work of an answer whose call has ended; nobody sees it (see {@link Charge#add}). */
  static final class Abandoned extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Abandoned INSTANCE = new Abandoned();

    private Abandoned() {
      super("the hook call ended before its answer was read", null, false, false);
    }
  }

  /**
   * What one answer takes. Its pipeline {@link #add adds} and {@link #remove removes} (rarely: a chunk of the body, a
   * few kilobytes of tree at a time), and anyone may {@link #close} it, once or more; synchronized, uncontended.
   */
  final class Charge implements AutoCloseable {
    private long weight;
    private long taken;
    private boolean closed;

    private Charge() {}

    /**
     * The answer takes {@code bytes} more.
     *
     * @throws HookCallException ({@link Reason#OVERLOADED}) when the budget cannot give them
     * @throws Abandoned when the charge was closed: the call ended (it timed out, say) while its answer was still
     *     being parsed on another thread, and a parse that nobody waits for must not go on growing a tree that no
     *     budget counts
     */
    synchronized void add(long bytes) {
      if (closed) {
        throw Abandoned.INSTANCE;
      }
      held.addAndGet(bytes);
      weight += bytes;
      long missing = weight - FREE_PER_ANSWER - taken;
      if (missing > 0) {
        long more = Math.max(missing, CHUNK);
        take(more);
        taken += more;
      }
    }

    /** The answer let go of {@code bytes} (its body, once parsed). */
    synchronized void remove(long bytes) {
      long removed = Math.min(weight, bytes);
      if (!closed) {
        held.addAndGet(-removed);
      }
      weight -= removed;
      long needed = Math.max(0, weight - FREE_PER_ANSWER);
      if (taken - needed >= CHUNK) {
        used.addAndGet(needed - taken);
        taken = needed;
      }
    }

    /** What the answer takes now, the free part included. */
    synchronized long weight() {
      return weight;
    }

    /** Gives everything back; after it, the answer takes nothing more from the budget. */
    @Override
    public synchronized void close() {
      if (!closed) {
        held.addAndGet(-weight);
      }
      closed = true;
      used.addAndGet(-taken);
      taken = 0;
    }
  }
}
