package dev.metareactor.engine.queue;

import dev.metareactor.engine.config.Scheduling;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The keyed work queue of one hosted controller: the keys of the objects that need a sync go in, each key comes
 * out to a worker when it should run, and the workers report how each run ended. It has the semantics of
 * client-go's rate-limited work queue, as a demand-driven {@link Flux}.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li><b>Coalescing.</b> Adding a key that is already waiting to run adds no run: any number of adds before a
 *       run becomes one run. A run reads the newest state of its object when it starts, so nothing is lost.
 *   <li><b>Causes.</b> Every add says why ({@link Trigger}). A run is handed out with the causes of the adds it
 *       coalesced ({@link Work#causes()}): the first {@value Causes#MAX_KEPT} distinct ones, and a count of the
 *       others. An add whose cause equals one the key keeps already changes nothing and allocates nothing.
 *   <li><b>One run of a key at a time.</b> A key is handed out again only after {@link #done} was called for its
 *       current run. Different keys run concurrently.
 *   <li><b>Re-run when added while running.</b> An add while the key runs marks it; when the run is done the key
 *       waits to run once more (however many adds came meanwhile).
 *   <li><b>Priority, never starvation.</b> A waiting key is in one of two lanes, each first in, first out (of
 *       the first add; a key re-queued after its run goes to the back): the <em>fresh</em> lane when one of its
 *       causes carries a change ({@link Trigger.Lane#FRESH}: the object's spec or metadata, a child, a related
 *       object, a map input, {@code sync-requested-at}), else the <em>background</em> lane (resyncs, retries,
 *       status-only changes, echoes, the initial list, shard moves). A key waiting in the background lane that
 *       gets a fresh cause moves to the back of the fresh lane. Keys are handed out from the fresh lane first; but
 *       once the first key of the background lane has waited {@link #BACKGROUND_PATIENCE}, after
 *       {@value #FRESH_BEFORE_BACKGROUND} fresh keys in a row the next one is the background lane's. So a short
 *       burst of changes (an edit wave) runs before any resync, retry or echo, and under fresh load that never
 *       ends the background lane still gets one hand-out in {@value #FRESH_BEFORE_BACKGROUND} + 1: a background
 *       key with {@code B} keys ahead of it in its lane runs within {@link #BACKGROUND_PATIENCE} plus
 *       {@code (B + 1) * (}{@value #FRESH_BEFORE_BACKGROUND}{@code  + 1)} hand-outs whatever the fresh load, and
 *       fresh keys always keep at least three quarters of the hand-outs.
 *   <li><b>Echoes.</b> An add for an {@link Trigger.Cause#ECHO ECHO} (the engine's own write coming back) of a
 *       key that is not waiting is a delayed add of {@link #ECHO_WINDOW}, so that the echoes of one run's writes
 *       make one run after it, not one each; a key already waiting keeps the cause and adds nothing. The echo of a
 *       key that is running waits {@link #ECHO_WINDOW} from the end of that run, not from its own arrival: the
 *       run's last writes (a status written after the children) are still to come back. A fresh add meanwhile runs
 *       the key at once, as any add does.
 *   <li><b>Bounded concurrency.</b> {@link #keys()} emits only as many keys as its subscriber requested;
 *       {@link #process} runs at most {@link WorkQueueOptions#workers()} keys at once.
 *   <li><b>Delayed adds.</b> {@link #addAfter} adds the key when the delay has passed. A key has at most one
 *       pending delayed add: the earliest due time wins and later ones are dropped. An {@link #add} while a
 *       delayed add is pending runs the key now; the delayed add still fires at its time (as in client-go: a run
 *       that was asked for at a time happens at or after that time).
 *   <li><b>Rate-limited retries.</b> A run that ends {@link Outcome.Kind#FAILED FAILED} adds the key after the
 *       larger of its own exponential backoff ({@code baseDelay * 2^failures}, at most {@code maxDelay}) and the
 *       wait for a token of the queue's overall retry bucket ({@link WorkQueueOptions#retry()}; client-go's
 *       default: 5ms to 1000s per key, 10 retries per second with a burst of 100 across keys). An add (a new
 *       event) is not held back by a pending backoff. {@link Outcome.Kind#SUCCESS SUCCESS} and {@link #forget}
 *       reset the key's failure count; {@link Outcome.Kind#RETRY_AFTER RETRY_AFTER} re-adds after its delay and
 *       leaves the count alone; a SUCCESS with a delay re-adds after it (resync). A
 *       {@link Outcome.Kind#CANCELLED CANCELLED} run is re-queued at once.
 *   <li><b>Told to come back later.</b> A run whose work asked to be retried later with a usable delay (a hook's
 *       429 with {@code Retry-After}) ends RETRY_AFTER, whose delay is always positive. One asked to come back
 *       without a usable delay (a 429 without {@code Retry-After}, with {@code 0}, a past date or garbage) ends
 *       FAILED: it waits at least the key's backoff, counts as a failure and takes a token of the retry bucket.
 *       So a key whose runs keep failing runs at most {@code 1 + floor(log2(T / baseDelay + 1))} times in
 *       {@code T} without a new event (with the defaults: 8 times in the first second, 13 in the first 30 s), and
 *       an overloaded hook that does not say for how long is never called in a hot loop.
 *   <li><b>Shutdown.</b> {@link #shutDown} refuses every later add and delayed add and drops the pending delayed
 *       adds. Keys that were already waiting (including keys added while running) still run, in-flight runs
 *       finish, failed runs are not retried. Then {@link #keys()} completes and the returned {@code Mono} emits
 *       {@code true}. If that has not happened when the drain timeout passes, the runs of {@link #process} still
 *       in flight are cancelled, the waiting keys are dropped, {@link #keys()} completes and the {@code Mono}
 *       emits {@code false}. A zero timeout stops at once (lost leadership).
 *   <li><b>Memory.</b> The queue keeps state only for keys that are waiting, running, delayed or have failures
 *       counted: an idle key that succeeded (or was forgotten) costs nothing, so memory is proportional to the
 *       number of active keys, never to the number of keys ever seen.
 * </ul>
 *
 * <h2>One queue per hosted controller</h2>
 *
 * <p>Each hosted controller gets its own queue and its own {@code --workers}, as in Metacontroller. Fair sharing
 * of one worker pool across controllers was considered and not chosen: per-controller queues isolate controllers
 * (a slow hook or a retry storm of one controller cannot take the workers of another), keep the per-controller
 * metrics and the meaning of {@code --workers} identical to upstream's, and let a controller stop by shutting
 * down its own queue. The price, the same as upstream's, is that the total concurrency is {@code --workers}
 * times the number of controllers; hook calls and API writes have their own limits downstream.
 *
 * <h2>Use</h2>
 *
 * <pre>{@code
 * KeyedWorkQueue<ParentKey> queue = new KeyedWorkQueue<>(new WorkQueueOptions(name, controller, workers, retry),
 *     scheduling, meters);
 * Disposable workers = queue.process((key, causes) -> sync(key)).subscribe(); // sync: Mono<Outcome>, non-blocking
 * informer events:  queue.add(key, trigger)                                    // cheap, never blocks, never drops
 * stop:             queue.shutDown(engine.shutdownTimeout()).block();
 * }</pre>
 *
 * <p>{@link #process} is the way to consume the queue: it calls {@link #done} exactly once per run, turns an
 * error or exception of the sync function into {@code FAILED}, an empty result into {@code SUCCESS} and a
 * cancellation into {@code CANCELLED}. {@link #keys()} is the lower-level form for callers that call
 * {@link #done} themselves; it allows one subscriber.
 *
 * <h2>Threading</h2>
 *
 * <p>All methods are thread-safe and non-blocking. {@link #add} is O(1) and allocates nothing when the key is
 * already waiting (its causes go to slots the key has already), except that a promotion from the background lane
 * to the fresh one removes the key from the background lane, linear in that lane's length. Keys are emitted on
 * whichever thread makes one available (an add, a {@code done}, a request, a timer); {@link #process} subscribes
 * each sync on the queue's scheduler, so the sync function never runs on the thread of an informer callback.
 * Delays, backoff and the drain timeout use the scheduler; metrics use the nanosecond clock.
 *
 * @param <K> the key type; keys need value equality (records, strings)
 */
public final class KeyedWorkQueue<K> {

  private static final Logger LOG = LoggerFactory.getLogger(KeyedWorkQueue.class);

  /**
   * How long an echo's add waits: long enough for the echoes of one run's writes (sent together, answered within
   * milliseconds) to come back and make one run, short against a hook author's wait to see the children counted.
   */
  public static final Duration ECHO_WINDOW = Duration.ofMillis(100);

  /** How many fresh keys are handed out in a row before a background key that waited long enough gets its turn. */
  public static final int FRESH_BEFORE_BACKGROUND = 3;

  /**
   * How long the first background key waits before it takes turns with fresh keys: longer than a burst of edits
   * takes to run, short against any resync period (one second at least).
   */
  public static final Duration BACKGROUND_PATIENCE = Duration.ofSeconds(1);

  /**
   * The state of one active key. Fields are read and written only inside {@code states.compute} for the key
   * (the map's bin lock orders them), except {@link #startedAt}, which the gauges read.
   */
  private static final class State {
    boolean queued;
    boolean processing;
    boolean dirty;
    /** Whether the key waits in the fresh lane (or will, when it is dirty). */
    boolean fresh;
    int failures;
    /** Volatile: the drain loop reads it of the background lane's first key, outside its compute. */
    volatile long waitingSince;
    /**
     * Since when the key waits in the lane it is in: {@link #waitingSince}, or the moment a fresh cause promoted it
     * (what {@code metareactor_queue_wait_seconds} of the fresh lane measures: how long a change waited, not how long
     * the resync it joined had waited before it came).
     */
    long laneSince;
    volatile long startedAt;
    long timerId;
    long dueAt;
    @Nullable Disposable timer;
    /** Why the pending delayed add adds the key. */
    @Nullable Trigger timerTrigger;
    /** The first echo that came while the key ran: its delayed add starts when the run ends. */
    @Nullable Trigger echoAfterRun;
    /** The causes of the next run: the first distinct ones, and how many more came. */
    final Trigger[] causes = new Trigger[Causes.MAX_KEPT];
    int causeCount;
    int dropped;

    boolean idle() {
      return !queued && !processing && !dirty && timerId == 0 && failures == 0;
    }

    void record(Trigger trigger) {
      for (int i = 0; i < causeCount; i++) {
        if (causes[i].equals(trigger)) {
          return;
        }
      }
      if (causeCount < causes.length) {
        causes[causeCount++] = trigger;
      } else if (dropped < Integer.MAX_VALUE) {
        dropped++;
      }
    }

    /**
     * The causes recorded so far, for the run that starts now after waiting {@code waitedNanos}; the next run's start
     * afresh.
     */
    Causes takeCauses(long waitedNanos) {
      if (causeCount == 0 && dropped == 0) {
        return Causes.NONE;
      }
      Causes taken = new Causes(List.of(Arrays.copyOf(causes, causeCount)), dropped, Math.max(0, waitedNanos));
      Arrays.fill(causes, null);
      causeCount = 0;
      dropped = 0;
      return taken;
    }
  }

  /**
   * The arguments and results of one add, one per thread: the state transitions read and write it inside
   * {@code states.compute}, which runs them on the calling thread, so that an add allocates no closure.
   */
  private static final class AddCall extends Delaying {
    @Nullable Trigger trigger;
    long due;
    boolean echo;
  }

  /** What a transition that set a key's delayed add leaves to do after compute returns. */
  private static class Delaying {
    /** The timer of the delayed add it replaced, to dispose. */
    @Nullable Disposable replaced;
    /** The id of the delayed add to arm, 0 for none. */
    long armId;
  }

  private final WorkQueueOptions options;
  private final Scheduler scheduler;
  private final LongSupplier clock;
  private final RetryRateLimiter retryLimiter;
  private final WorkQueueMetrics metrics;

  private final ConcurrentHashMap<K, State> states = new ConcurrentHashMap<>();
  /**
   * Keys waiting to run, by lane: a key is in the lane its state names while it is {@code queued} (and rarely, after
   * a promotion raced with its hand-out, once more where its state no longer is: such an entry is skipped).
   */
  private final Queue<K> freshLane = new ConcurrentLinkedQueue<>();
  private final Queue<K> backgroundLane = new ConcurrentLinkedQueue<>();
  private final ThreadLocal<AddCall> calls = ThreadLocal.withInitial(AddCall::new);
  private final Set<State> running = ConcurrentHashMap.newKeySet();
  private final LongAdder depth = new LongAdder();
  private final AtomicLong timerIds = new AtomicLong();
  private final BiFunction<K, State, State> addTransition = this::onAdd;
  private final BiFunction<K, State, State> startTransition = this::onStart;
  private final BiFunction<K, State, State> delayTransition = this::onAddLater;

  private final AtomicReference<KeySubscription> subscription = new AtomicReference<>();
  private final AtomicLong requested = new AtomicLong();
  private final AtomicInteger drainWork = new AtomicInteger();
  /** Written by {@link #onStart} and read right after it, both by the thread that owns the drain loop. */
  private @Nullable State started;
  private long startedWaitingSince;
  private long startedLaneSince;
  private Causes startedCauses = Causes.NONE;
  private boolean startedFresh;
  /** Fresh keys handed out in a row; only the drain loop touches it. */
  private int freshInARow;

  private final AtomicBoolean shutdownStarted = new AtomicBoolean();
  private volatile boolean shuttingDown;
  private volatile boolean aborted;
  private volatile boolean terminated;
  private volatile @Nullable Disposable drainDeadline;
  private final Sinks.One<Boolean> termination = Sinks.one();
  private final Sinks.Empty<Void> abort = Sinks.empty();
  private final Flux<Work<K>> keys;

  /**
   * @param options name, workers and retry settings
   * @param scheduler runs delayed adds, backoff, the drain deadline and the syncs of {@link #process}
   * @param nanoClock monotonic nanoseconds, for the overall retry bucket and the metrics; with a
   *     {@code VirtualTimeScheduler} pass {@code () -> scheduler.now(TimeUnit.NANOSECONDS)}
   * @param registry where the {@code workqueue_*} metrics go
   */
  public KeyedWorkQueue(WorkQueueOptions options, Scheduler scheduler, LongSupplier nanoClock,
      MeterRegistry registry) {
    this.options = Objects.requireNonNull(options, "options");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.clock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.retryLimiter = new RetryRateLimiter(options.retry(), nanoClock);
    this.metrics = new WorkQueueMetrics(Objects.requireNonNull(registry, "registry"), options, this);
    this.keys = Flux.from((Publisher<Work<K>>) this::subscribeKeys);
  }

  /**
   * A queue on the engine's {@link Scheduling#work()} scheduler and {@link Scheduling#nanoTime()} clock (not the
   * scheduler's own, which Reactor's parallel scheduler only keeps to the millisecond).
   */
  public KeyedWorkQueue(WorkQueueOptions options, Scheduling scheduling, MeterRegistry registry) {
    this(options, scheduling.work(), scheduling.nanoTime(), registry);
  }

  public WorkQueueOptions options() {
    return options;
  }

  /**
   * Adds the key, for {@code trigger}, to run as soon as a worker is free and its lane's turn comes (an echo: see
   * the class documentation); ignored once the queue is shutting down.
   */
  public void add(K key, Trigger trigger) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(trigger, "trigger");
    if (shuttingDown) {
      return;
    }
    if (trigger.cause().deferred()) {
      addLater(key, ECHO_WINDOW.toNanos(), trigger, true);
      return;
    }
    AddCall call = calls.get();
    call.trigger = trigger;
    try {
      states.compute(key, addTransition);
    } finally {
      call.trigger = null;
    }
    if (requested.get() > 0 && hasWaiting()) {
      drain();
    }
  }

  /**
   * Adds the key, for {@code trigger}, once {@code delay} has passed (at once if it is zero or negative). The
   * earliest pending due time of a key wins. Ignored once the queue is shutting down.
   */
  public void addAfter(K key, Duration delay, Trigger trigger) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(delay, "delay");
    Objects.requireNonNull(trigger, "trigger");
    if (shuttingDown) {
      return;
    }
    metrics.retries.increment();
    if (delay.isNegative() || delay.isZero()) {
      add(key, trigger);
      return;
    }
    addLater(key, saturatedNanos(delay), trigger, false);
  }

  /**
   * Forgets the key's failures: its next failure backs off from the base delay again (client-go's
   * {@code Forget}). A pending retry is not cancelled.
   */
  public void forget(K key) {
    Objects.requireNonNull(key, "key");
    states.computeIfPresent(key, (k, s) -> {
      s.failures = 0;
      return s.idle() ? null : s;
    });
  }

  /** How many times in a row the key's runs failed (client-go's {@code NumRequeues}). */
  public int numRequeues(K key) {
    State state = states.get(Objects.requireNonNull(key, "key"));
    return state == null ? 0 : state.failures;
  }

  public boolean isShuttingDown() {
    return shuttingDown;
  }

  /**
   * The keys to run with their causes, emitted only on demand; each emitted key is running until {@link #done} is
   * called for it.
   * Completes when the queue has shut down. One subscriber at a time and only one ever: a second subscriber
   * receives an {@link IllegalStateException}. Prefer {@link #process}, which cannot forget {@code done}.
   */
  public Flux<Work<K>> keys() {
    return keys;
  }

  /**
   * Ends the current run of the key. See the class documentation for what each outcome does.
   *
   * @throws IllegalStateException if the key is not running (and the queue has not terminated)
   */
  public void done(K key, Outcome outcome) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(outcome, "outcome");
    Finished finished = new Finished();
    states.computeIfPresent(key, (k, s) -> onDone(k, s, outcome, finished));
    if (finished.state == null) {
      if (terminated) {
        return;
      }
      throw new IllegalStateException(key + " is not running in work queue " + options.name());
    }
    running.remove(finished.state);
    metrics.worked(clock.getAsLong() - finished.startedAt);
    switch (outcome.kind()) {
      case FAILED -> addAfter(key, Duration.ofNanos(retryLimiter.delayNanos(finished.previousFailures)),
          Trigger.of(Trigger.Cause.RETRY_FAILED));
      case SUCCESS -> {
        if (!outcome.after().isZero()) {
          addAfter(key, outcome.after(), Trigger.of(Trigger.Cause.RESYNC_AFTER));
        }
      }
      case RETRY_AFTER -> addAfter(key, outcome.after(), Trigger.of(Trigger.Cause.RETRY_LATER));
      case CANCELLED -> { }
    }
    // The echoes that came during the run: added once they had the window after it to come back.
    if (finished.replaced != null) {
      finished.replaced.dispose();
    }
    if (finished.armId != 0) {
      arm(key, finished.armId, ECHO_WINDOW.toNanos());
    }
    drain();
  }

  /**
   * Runs the queue's keys with {@code sync}, given each key and the causes of its run, at most
   * {@link WorkQueueOptions#workers()} at once, until the queue has shut down; subscribe once. Each run calls
   * {@link #done} exactly once: with the outcome the sync emits, {@code SUCCESS} if it completes empty,
   * {@code FAILED} if it errors or the function throws (logged), and {@code CANCELLED} if the run is cancelled.
   * The sync must not block; it is subscribed on the queue's scheduler.
   */
  public Mono<Void> process(BiFunction<? super K, Causes, ? extends Mono<Outcome>> sync) {
    Objects.requireNonNull(sync, "sync");
    return keys
        .flatMap(work -> run(work, sync), options.workers(), 1)
        .then()
        .takeUntilOther(abort.asMono());
  }

  /**
   * Starts shutting down (see the class documentation) and returns a {@code Mono} that emits {@code true} once
   * everything that was waiting or running has finished, or {@code false} if the drain timeout passed first and
   * what was left was cancelled. Calling it again returns the same {@code Mono} and ignores the new timeout.
   */
  public Mono<Boolean> shutDown(Duration drainTimeout) {
    Objects.requireNonNull(drainTimeout, "drainTimeout");
    if (drainTimeout.isNegative()) {
      throw new IllegalArgumentException("drainTimeout must not be negative, got " + drainTimeout);
    }
    if (shutdownStarted.compareAndSet(false, true)) {
      shuttingDown = true;
      cancelDelayedAdds();
      if (drainTimeout.isZero()) {
        abort();
      } else {
        scheduleDrainDeadline(drainTimeout);
      }
      drain();
    }
    return termination.asMono();
  }

  // ---- state transitions: each runs inside states.compute for its key. They only touch the key's state, the
  // ---- lock-free lanes and counters; emitting, scheduling and disposing happen after compute returns.

  private @Nullable State onAdd(K key, @Nullable State s) {
    if (shuttingDown) {
      return s;
    }
    State state = s == null ? new State() : s;
    markWaiting(key, state, Objects.requireNonNull(calls.get().trigger, "set by add()"));
    return state;
  }

  private void markWaiting(K key, State s, Trigger trigger) {
    s.record(trigger);
    boolean fresh = trigger.lane() == Trigger.Lane.FRESH;
    if (s.queued) {
      if (fresh && !s.fresh) {
        // Promoted: to the back of the fresh lane, where it waits less than at its place in the background lane.
        backgroundLane.remove(key);
        s.fresh = true;
        s.laneSince = clock.getAsLong();
        freshLane.offer(key);
      }
      return;
    }
    if (s.dirty) {
      if (fresh && !s.fresh) {
        s.fresh = true;
        s.laneSince = clock.getAsLong();
      }
      return;
    }
    metrics.adds.increment();
    depth.increment();
    s.waitingSince = clock.getAsLong();
    s.laneSince = s.waitingSince;
    s.fresh = fresh;
    if (s.processing) {
      s.dirty = true;
    } else {
      s.queued = true;
      laneOf(s).offer(key);
    }
  }

  private Queue<K> laneOf(State s) {
    return s.fresh ? freshLane : backgroundLane;
  }

  private boolean hasWaiting() {
    return !freshLane.isEmpty() || !backgroundLane.isEmpty();
  }

  private @Nullable State onStart(K key, @Nullable State s) {
    started = null;
    if (s != null && s.queued) {
      s.queued = false;
      s.processing = true;
      s.startedAt = clock.getAsLong();
      started = s;
      startedWaitingSince = s.waitingSince;
      startedLaneSince = s.laneSince;
      startedCauses = s.takeCauses(s.startedAt - s.waitingSince);
      startedFresh = s.fresh;
      s.fresh = false;
    }
    return s;
  }

  private @Nullable State onDone(K key, State s, Outcome outcome, Finished finished) {
    if (!s.processing) {
      return s;
    }
    finished.state = s;
    finished.startedAt = s.startedAt;
    finished.previousFailures = s.failures;
    s.processing = false;
    switch (outcome.kind()) {
      case SUCCESS -> s.failures = 0;
      case FAILED -> s.failures = s.failures == Integer.MAX_VALUE ? s.failures : s.failures + 1;
      case RETRY_AFTER -> { }
      case CANCELLED -> {
        if (!shuttingDown) {
          markWaiting(key, s, Trigger.of(Trigger.Cause.RETRY_CANCELLED));
        }
      }
    }
    if (s.dirty) {
      s.dirty = false;
      s.queued = true;
      laneOf(s).offer(key);
    } else if (s.echoAfterRun != null && !shuttingDown) {
      delay(s, clock.getAsLong() + ECHO_WINDOW.toNanos(), s.echoAfterRun, finished);
    }
    s.echoAfterRun = null;
    return s.idle() ? null : s;
  }

  /** Per-call results of {@link #onDone}, read after compute returns. */
  private static final class Finished extends Delaying {
    @Nullable State state;
    long startedAt;
    int previousFailures;
  }

  // ---- delayed adds

  /**
   * A delayed add; for an echo, one that a waiting key does not need (its cause is kept: whichever run starts next
   * sees the echoed write).
   */
  private void addLater(K key, long delayNanos, Trigger trigger, boolean echo) {
    AddCall call = calls.get();
    call.trigger = trigger;
    call.due = clock.getAsLong() + delayNanos;
    call.echo = echo;
    Disposable replaced;
    long armId;
    try {
      states.compute(key, delayTransition);
    } finally {
      replaced = call.replaced;
      armId = call.armId;
      call.trigger = null;
      call.replaced = null;
      call.armId = 0;
    }
    if (replaced != null) {
      replaced.dispose();
    }
    if (armId != 0) {
      arm(key, armId, delayNanos);
    }
  }

  private @Nullable State onAddLater(K key, @Nullable State s) {
    if (shuttingDown) {
      return s;
    }
    State state = s == null ? new State() : s;
    AddCall call = calls.get();
    Trigger trigger = Objects.requireNonNull(call.trigger, "set by addLater()");
    if (call.echo) {
      state.record(trigger);
      if (state.queued || state.dirty) {
        return state; // it runs anyway, and that run sees the echoed write
      }
      if (state.processing) {
        if (state.echoAfterRun == null) {
          state.echoAfterRun = trigger;
        }
        return state;
      }
    }
    delay(state, call.due, trigger, call);
    return state;
  }

  /** Makes {@code due} the key's delayed add, for {@code trigger}, unless one at least as early is pending. */
  private void delay(State state, long due, Trigger trigger, Delaying delaying) {
    if (state.timerId != 0 && state.dueAt - due <= 0) {
      return;
    }
    delaying.replaced = state.timer;
    state.timer = null;
    state.timerId = timerIds.incrementAndGet();
    state.dueAt = due;
    state.timerTrigger = trigger;
    delaying.armId = state.timerId;
  }

  private void arm(K key, long timerId, long delayNanos) {
    Disposable timer;
    try {
      timer = scheduler.schedule(() -> fire(key, timerId), delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      LOG.warn("{}: delayed add of {} dropped, the scheduler is shut down", options.controller(), key);
      states.computeIfPresent(key, (k, s) -> {
        if (s.timerId == timerId) {
          s.timerId = 0;
        }
        return s.idle() ? null : s;
      });
      return;
    }
    State state = states.computeIfPresent(key, (k, s) -> {
      if (s.timerId == timerId) {
        s.timer = timer;
      }
      return s;
    });
    // Not attached: the timer was replaced by an earlier one, has fired, or was cancelled by shutdown.
    if (state == null || state.timer != timer) {
      timer.dispose();
    }
  }

  private void fire(K key, long timerId) {
    states.computeIfPresent(key, (k, s) -> {
      if (s.timerId != timerId) {
        return s;
      }
      Trigger trigger = Objects.requireNonNull(s.timerTrigger, "set with the timer");
      s.timerId = 0;
      s.timer = null;
      s.timerTrigger = null;
      if (!shuttingDown) {
        markWaiting(k, s, trigger);
      }
      return s.idle() ? null : s;
    });
    drain();
  }

  private void cancelDelayedAdds() {
    List<Disposable> timers = new ArrayList<>();
    for (K key : states.keySet()) {
      states.computeIfPresent(key, (k, s) -> {
        if (s.timer != null) {
          timers.add(s.timer);
        }
        s.timer = null;
        s.timerId = 0;
        s.timerTrigger = null;
        return s.idle() ? null : s;
      });
    }
    timers.forEach(Disposable::dispose);
  }

  // ---- emission: one drain loop at a time (drainWork counts the requests to drain)

  private void drain() {
    if (drainWork.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      KeySubscription sub = subscription.get();
      if (!terminated) {
        if (aborted) {
          terminate(false);
        } else {
          if (sub != null && !sub.cancelled) {
            emit(sub);
          }
          // running before the lanes: done() re-queues a key before it leaves running.
          if (shuttingDown && running.isEmpty() && !hasWaiting()) {
            terminate(true);
          }
        }
      }
      if (terminated && sub != null && !sub.cancelled && !sub.completed) {
        sub.completed = true;
        sub.actual.onComplete();
      }
      missed = drainWork.addAndGet(-missed);
    } while (missed != 0);
  }

  private void emit(KeySubscription sub) {
    long wanted = requested.get();
    long emitted = 0;
    while (emitted != wanted && !sub.cancelled) {
      K key = nextKey();
      if (key == null) {
        break;
      }
      states.compute(key, startTransition);
      State state = started;
      if (state == null) {
        continue;
      }
      Causes causes = startedCauses;
      startedCauses = Causes.NONE;
      depth.decrement();
      running.add(state);
      metrics.queued(state.startedAt - startedWaitingSince, state.startedAt - startedLaneSince, startedFresh);
      sub.actual.onNext(new Work<>(key, causes));
      emitted++;
    }
    if (emitted != 0 && wanted != Long.MAX_VALUE) {
      requested.addAndGet(-emitted);
    }
  }

  /** The next key to hand out: see "Priority" in the class documentation. */
  private @Nullable K nextKey() {
    if (freshInARow >= FRESH_BEFORE_BACKGROUND && backgroundTurn()) {
      K key = backgroundLane.poll();
      if (key != null) {
        freshInARow = 0;
        return key;
      }
    }
    K key = freshLane.poll();
    if (key != null) {
      freshInARow++;
      return key;
    }
    freshInARow = 0;
    return backgroundLane.poll();
  }

  /**
   * Whether the background lane's first key has waited {@link #BACKGROUND_PATIENCE} (or is a stale entry, which
   * costs a fresh key nothing to skip).
   */
  private boolean backgroundTurn() {
    K head = backgroundLane.peek();
    if (head == null) {
      return false;
    }
    State state = states.get(head);
    return state == null || !state.queued || state.fresh
        || clock.getAsLong() - state.waitingSince >= BACKGROUND_PATIENCE.toNanos();
  }

  private void terminate(boolean drained) {
    terminated = true;
    Disposable deadline = drainDeadline;
    if (deadline != null) {
      deadline.dispose();
    }
    cancelDelayedAdds();
    states.clear();
    freshLane.clear();
    backgroundLane.clear();
    running.clear();
    depth.reset();
    metrics.close();
    termination.tryEmitValue(drained);
  }

  private void scheduleDrainDeadline(Duration drainTimeout) {
    try {
      drainDeadline = scheduler.schedule(this::abort, saturatedNanos(drainTimeout), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      abort();
    }
  }

  private void abort() {
    if (terminated) {
      return;
    }
    aborted = true;
    abort.tryEmitEmpty();
    drain();
  }

  // ---- process()

  private Mono<Void> run(Work<K> work, BiFunction<? super K, Causes, ? extends Mono<Outcome>> sync) {
    K key = work.key();
    Completion completion = new Completion(key);
    return Mono.<Outcome>defer(() -> sync.apply(key, work.causes()))
        .subscribeOn(scheduler)
        .onErrorResume(error -> {
          LOG.warn("{}: sync of {} failed", options.controller(), key, error);
          return Mono.just(Outcome.failed());
        })
        .defaultIfEmpty(Outcome.success())
        .doOnNext(completion::complete)
        .doOnCancel(() -> completion.complete(Outcome.cancelled()))
        .then();
  }

  /** Calls {@link #done} for one run exactly once, whichever of its outcome and its cancellation comes first. */
  private final class Completion extends AtomicBoolean {
    private final K key;

    Completion(K key) {
      this.key = key;
    }

    void complete(Outcome outcome) {
      if (compareAndSet(false, true)) {
        done(key, outcome);
      }
    }
  }

  // ---- keys()

  private void subscribeKeys(Subscriber<? super Work<K>> actual) {
    KeySubscription sub = new KeySubscription(actual);
    if (!subscription.compareAndSet(null, sub)) {
      Operators.error(actual, new IllegalStateException(
          "work queue " + options.name() + " already has a subscriber; keys() allows one"));
      return;
    }
    actual.onSubscribe(sub);
    drain();
  }

  private final class KeySubscription implements Subscription {
    final Subscriber<? super Work<K>> actual;
    volatile boolean cancelled;
    /** Only touched by the drain loop. */
    boolean completed;

    KeySubscription(Subscriber<? super Work<K>> actual) {
      this.actual = actual;
    }

    @Override
    public void request(long n) {
      if (Operators.validate(n)) {
        requested.getAndAccumulate(n, Operators::addCap);
        drain();
      }
    }

    @Override
    public void cancel() {
      cancelled = true;
    }
  }

  /**
   * Whether no key is waiting to run or running (delayed adds and backoffs do not count). Cheap; for readiness
   * checks ("everything seen so far has been handled once").
   */
  public boolean isQuiet() {
    return depth.sum() == 0 && running.isEmpty();
  }

  // ---- gauges and test accessors

  double depth() {
    return depth.sum();
  }

  double unfinishedWorkSeconds() {
    long now = clock.getAsLong();
    long total = 0;
    for (State state : running) {
      total += now - state.startedAt;
    }
    return total / 1e9;
  }

  double longestRunningSeconds() {
    long now = clock.getAsLong();
    long longest = 0;
    for (State state : running) {
      longest = Math.max(longest, now - state.startedAt);
    }
    return longest / 1e9;
  }

  /** How many keys the queue holds state for. */
  int stateCount() {
    return states.size();
  }

  /** A duration in nanoseconds, saturating at about 292 years instead of overflowing. */
  static long saturatedNanos(Duration duration) {
    try {
      return duration.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 2;
    }
  }
}
