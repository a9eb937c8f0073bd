package dev.metareactor.engine.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.RetrySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.test.subscriber.TestSubscriber;

/** Every guarantee of {@link KeyedWorkQueue}, in virtual time. */
class KeyedWorkQueueTest {

  /** The cause of the tests' adds: a change (fresh lane). */
  private static final Trigger CHANGED = Trigger.of(Trigger.Cause.SPEC);
  /** The cause of the tests' delayed adds. */
  private static final Trigger LATER = Trigger.of(Trigger.Cause.RESYNC_AFTER);

  private static final RetrySettings FAST_RETRY =
      new RetrySettings(Duration.ofSeconds(1), Duration.ofSeconds(8), new RateLimit(1000, 1000));

  private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void stopTime() {
    time.dispose();
  }

  private KeyedWorkQueue<String> queue(int workers) {
    return queue(new WorkQueueOptions("test-queue", "test", workers, FAST_RETRY));
  }

  private KeyedWorkQueue<String> queue(WorkQueueOptions options) {
    return new KeyedWorkQueue<>(options, time, () -> time.now(TimeUnit.NANOSECONDS), registry);
  }

  /** Starts processing the queue with the sync and returns the sync. */
  private static <S extends Function<String, Mono<Outcome>>> S running(KeyedWorkQueue<String> queue, S sync) {
    queue.process((key, causes) -> sync.apply(key)).subscribe();
    return sync;
  }

  private static List<String> keysOf(TestSubscriber<Work<String>> worker) {
    return worker.getReceivedOnNext().stream().map(Work::key).toList();
  }

  private TimedSync instantSuccess() {
    return new TimedSync(Duration.ZERO, key -> Outcome.success());
  }

  private long millis() {
    return time.now(TimeUnit.MILLISECONDS);
  }

  private void advance(Duration duration) {
    time.advanceTimeBy(duration);
  }

  /**
   * A sync whose runs stay open until the test finishes them. Records every start and counts runs of a key that
   * overlap.
   */
  private final class ManualSync implements Function<String, Mono<Outcome>> {
    final List<String> started = Collections.synchronizedList(new ArrayList<>());
    final List<Long> startMillis = Collections.synchronizedList(new ArrayList<>());
    final Map<String, Sinks.One<Outcome>> open = new ConcurrentHashMap<>();
    final AtomicInteger overlaps = new AtomicInteger();
    final AtomicInteger cancellations = new AtomicInteger();

    @Override
    public Mono<Outcome> apply(String key) {
      started.add(key);
      startMillis.add(millis());
      Sinks.One<Outcome> run = Sinks.one();
      if (open.putIfAbsent(key, run) != null) {
        overlaps.incrementAndGet();
      }
      return run.asMono().doOnCancel(cancellations::incrementAndGet);
    }

    void finish(String key, Outcome outcome) {
      Sinks.One<Outcome> run = open.remove(key);
      assertThat(run).as("open run of %s", key).isNotNull();
      run.tryEmitValue(outcome);
    }

    void succeed(String... keys) {
      for (String key : keys) {
        finish(key, Outcome.success());
      }
    }
  }

  /** A sync where each run takes a fixed virtual time and ends with the outcome the function gives for the key. */
  private final class TimedSync implements Function<String, Mono<Outcome>> {
    final Map<String, List<Long>> starts = new ConcurrentHashMap<>();
    final AtomicInteger active = new AtomicInteger();
    final AtomicInteger maxActive = new AtomicInteger();
    final Duration runTime;
    final Function<String, Outcome> outcome;

    TimedSync(Duration runTime, Function<String, Outcome> outcome) {
      this.runTime = runTime;
      this.outcome = outcome;
    }

    @Override
    public Mono<Outcome> apply(String key) {
      starts.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>())).add(millis());
      maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
      return Mono.delay(runTime, time)
          .map(tick -> outcome.apply(key))
          .doFinally(signal -> active.decrementAndGet());
    }

    List<Long> startsOf(String key) {
      return starts.getOrDefault(key, List.of());
    }
  }

  @Test
  void addsOfAWaitingKeyCoalesceIntoOneRun() {
    KeyedWorkQueue<String> queue = queue(2);
    queue.add("a", CHANGED);
    queue.add("a", CHANGED);
    queue.add("a", CHANGED);
    queue.add("b", CHANGED);
    assertThat(queue.depth()).isEqualTo(2);

    ManualSync sync = running(queue, new ManualSync());
    sync.succeed("a", "b");

    assertThat(sync.started).containsExactly("a", "b");
    assertThat(registry.get("workqueue.adds").counter().count()).isEqualTo(2);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void isQuietOnlyWhenNothingWaitsOrRunsWhileDelayedAddsDoNotCount() {
    KeyedWorkQueue<String> queue = queue(1);
    assertThat(queue.isQuiet()).isTrue();
    queue.add("a", CHANGED);
    assertThat(queue.isQuiet()).as("a waits").isFalse();

    ManualSync sync = running(queue, new ManualSync());
    assertThat(sync.started).containsExactly("a");
    assertThat(queue.isQuiet()).as("a runs").isFalse();
    sync.finish("a", Outcome.resyncAfter(Duration.ofSeconds(5)));
    assertThat(queue.isQuiet()).as("only a delayed add is pending").isTrue();

    advance(Duration.ofSeconds(5));
    assertThat(queue.isQuiet()).as("the delayed add fired and runs").isFalse();
    sync.succeed("a");
    assertThat(queue.isQuiet()).isTrue();
  }

  @Test
  void keysRunInTheOrderTheyFirstStartedWaiting() {
    KeyedWorkQueue<String> queue = queue(1);
    for (String key : List.of("c", "a", "b", "a", "c")) {
      queue.add(key, CHANGED);
    }
    ManualSync sync = running(queue, new ManualSync());
    queue.add("d", CHANGED);
    sync.succeed("c");
    queue.add("c", CHANGED);
    sync.succeed("a", "b", "d", "c");

    assertThat(sync.started).containsExactly("c", "a", "b", "d", "c");
  }

  @Test
  void aKeyNeverRunsTwiceAtOnceAndAnAddWhileItRunsRunsItOnceMore() {
    KeyedWorkQueue<String> queue = queue(4);
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a", CHANGED);
    queue.add("a", CHANGED);
    queue.add("a", CHANGED);
    assertThat(sync.started).containsExactly("a");
    assertThat(queue.depth()).as("one re-run is waiting").isEqualTo(1);

    sync.succeed("a");
    assertThat(sync.started).containsExactly("a", "a");
    sync.succeed("a");
    assertThat(sync.started).containsExactly("a", "a");
    assertThat(sync.overlaps).hasValue(0);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void concurrencyIsBoundedByWorkersAndFreedSlotsAreRefilled() {
    KeyedWorkQueue<String> queue = queue(3);
    TimedSync sync = running(queue, new TimedSync(Duration.ofSeconds(1), key -> Outcome.success()));
    for (int i = 0; i < 10; i++) {
      queue.add("k" + i, CHANGED);
    }
    assertThat(sync.active).hasValue(3);

    advance(Duration.ofSeconds(3));
    assertThat(sync.starts).hasSize(10);
    assertThat(sync.startsOf("k9")).containsExactly(3000L);
    advance(Duration.ofSeconds(1));
    assertThat(sync.active).hasValue(0);
    assertThat(sync.maxActive).hasValue(3);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void keysAreEmittedOnlyOnDemand() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> subscriber = TestSubscriber.<Work<String>>builder().initialRequest(0).build();
    queue.keys().subscribe(subscriber);
    queue.add("a", CHANGED);
    queue.add("b", CHANGED);
    queue.add("c", CHANGED);
    assertThat(keysOf(subscriber)).isEmpty();

    subscriber.request(2);
    assertThat(keysOf(subscriber)).containsExactly("a", "b");
    assertThat(queue.depth()).isEqualTo(1);

    queue.done("a", Outcome.success());
    assertThat(keysOf(subscriber)).as("done without demand emits nothing").hasSize(2);
    subscriber.request(1);
    assertThat(keysOf(subscriber)).containsExactly("a", "b", "c");
  }

  @Test
  void keysAllowsOneSubscriber() {
    KeyedWorkQueue<String> queue = queue(1);
    queue.keys().subscribe(TestSubscriber.create());
    TestSubscriber<Work<String>> second = TestSubscriber.create();
    queue.keys().subscribe(second);

    assertThat(second.expectTerminalError()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("test-queue");
  }

  @Test
  void doneOfAKeyThatIsNotRunningIsRejected() {
    KeyedWorkQueue<String> queue = queue(1);
    queue.add("a", CHANGED);

    assertThatThrownBy(() -> queue.done("a", Outcome.success()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("a is not running");
  }

  @Test
  void aDelayedAddRunsAtItsDueTime() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = running(queue, instantSuccess());

    queue.addAfter("a", Duration.ofSeconds(10), LATER);
    advance(Duration.ofMillis(9_999));
    assertThat(sync.startsOf("a")).isEmpty();
    advance(Duration.ofMillis(1));
    assertThat(sync.startsOf("a")).containsExactly(10_000L);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void theEarliestDelayedAddWinsWhicheverComesFirst() {
    KeyedWorkQueue<String> queue = queue(2);
    TimedSync sync = running(queue, instantSuccess());

    queue.addAfter("later-first", Duration.ofSeconds(10), LATER);
    queue.addAfter("later-first", Duration.ofSeconds(5), LATER);
    queue.addAfter("sooner-first", Duration.ofSeconds(5), LATER);
    queue.addAfter("sooner-first", Duration.ofSeconds(10), LATER);
    advance(Duration.ofSeconds(30));

    assertThat(sync.startsOf("later-first")).containsExactly(5_000L);
    assertThat(sync.startsOf("sooner-first")).containsExactly(5_000L);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void anAddWhileADelayedAddIsPendingRunsNowAndTheDelayedAddStillFires() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = running(queue, instantSuccess());

    queue.addAfter("a", Duration.ofSeconds(10), LATER);
    advance(Duration.ofSeconds(1));
    queue.add("a", CHANGED);
    assertThat(sync.startsOf("a")).containsExactly(1_000L);
    advance(Duration.ofSeconds(20));
    assertThat(sync.startsOf("a")).containsExactly(1_000L, 10_000L);
  }

  @Test
  void failedRunsBackOffExponentiallyPerKeyUpToTheMaximum() {
    KeyedWorkQueue<String> queue = queue(2);
    TimedSync sync = running(queue, new TimedSync(Duration.ZERO,
        key -> key.equals("bad") ? Outcome.failed() : Outcome.success()));

    queue.add("bad", CHANGED);
    queue.add("good", CHANGED);
    advance(Duration.ofSeconds(24));

    // 1s base doubling, capped at 8s: runs at 0, 1, 3, 7, 15, 23
    assertThat(sync.startsOf("bad")).containsExactly(0L, 1_000L, 3_000L, 7_000L, 15_000L, 23_000L);
    assertThat(sync.startsOf("good")).containsExactly(0L);
    assertThat(queue.numRequeues("bad")).isEqualTo(6);
    assertThat(queue.numRequeues("good")).isZero();
  }

  @Test
  void theOverallRetryBucketSpacesOutRetriesAcrossKeys() {
    RetrySettings retry = new RetrySettings(Duration.ofMillis(1), Duration.ofSeconds(100), new RateLimit(1, 2));
    KeyedWorkQueue<String> queue = queue(new WorkQueueOptions("bucket", "test", 4, retry));
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    TimedSync sync = running(queue, new TimedSync(Duration.ZERO, key ->
        runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() == 1
            ? Outcome.failed() : Outcome.success()));
    for (String key : List.of("a", "b", "c", "d")) {
      queue.add(key, CHANGED);
    }
    advance(Duration.ofSeconds(10));

    // burst of two tokens: two retries after the 1ms backoff, then one token per second
    List<Long> retryTimes = new ArrayList<>();
    for (String key : List.of("a", "b", "c", "d")) {
      assertThat(sync.startsOf(key)).hasSize(2);
      retryTimes.add(sync.startsOf(key).get(1));
    }
    assertThat(retryTimes).containsExactlyInAnyOrder(1L, 1L, 1_000L, 2_000L);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void anAddIsNotHeldBackByAPendingBackoff() {
    RetrySettings slow = new RetrySettings(Duration.ofSeconds(100), Duration.ofSeconds(100), new RateLimit(10, 10));
    KeyedWorkQueue<String> queue = queue(new WorkQueueOptions("bypass", "test", 1, slow));
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a", CHANGED);
    sync.finish("a", Outcome.failed());
    advance(Duration.ofSeconds(1));
    queue.add("a", CHANGED);

    assertThat(sync.startMillis).containsExactly(0L, 1_000L);
    sync.succeed("a");
    assertThat(queue.numRequeues("a")).isZero();
  }

  @Test
  void successAndForgetResetTheFailureCount() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a", CHANGED);
    sync.finish("a", Outcome.failed());
    advance(Duration.ofSeconds(1));
    sync.finish("a", Outcome.failed());
    assertThat(queue.numRequeues("a")).isEqualTo(2);
    queue.forget("a");
    assertThat(queue.numRequeues("a")).isZero();

    advance(Duration.ofSeconds(2));
    sync.finish("a", Outcome.failed());
    advance(Duration.ofSeconds(1));
    assertThat(sync.startMillis).as("after forget the backoff starts from the base again")
        .containsExactly(0L, 1_000L, 3_000L, 4_000L);
    sync.succeed("a");
    assertThat(queue.numRequeues("a")).isZero();
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void duringShutdownNoKeyIsAddedOrRetriedAndKeysCompletes() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = TestSubscriber.create();
    queue.keys().subscribe(worker);
    queue.add("a", CHANGED);
    queue.shutDown(Duration.ofMinutes(1));
    queue.add("b", CHANGED);
    queue.done("a", Outcome.failed());

    assertThat(keysOf(worker)).containsExactly("a");
    assertThat(worker.isTerminatedComplete()).isTrue();
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void retryAfterRunsTheKeyAgainWithoutCountingAFailure() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a", CHANGED);
    sync.finish("a", Outcome.failed());
    advance(Duration.ofSeconds(1));
    sync.finish("a", Outcome.retryAfter(Duration.ofSeconds(30)));
    assertThat(queue.numRequeues("a")).isEqualTo(1);
    advance(Duration.ofSeconds(30));

    assertThat(sync.startMillis).containsExactly(0L, 1_000L, 31_000L);
    assertThat(registry.get("workqueue.retries").counter().count()).isEqualTo(2);
  }

  @Test
  void aKeyThatKeepsFailingRunsAtMostOncePerBackoffStepNeverInAHotLoop() {
    // client-go's defaults: 5 ms doubling; a hook answering 429 without a usable Retry-After ends FAILED.
    KeyedWorkQueue<String> queue = queue(WorkQueueOptions.of("test-queue", "test", 1));
    TimedSync sync = running(queue, new TimedSync(Duration.ZERO, key -> Outcome.failed()));

    queue.add("a", CHANGED);
    advance(Duration.ofSeconds(1));
    int firstSecond = sync.startsOf("a").size();
    advance(Duration.ofSeconds(29));

    // The contract on KeyedWorkQueue: at most 1 + floor(log2(T / baseDelay + 1)) runs in T.
    assertThat(firstSecond).isEqualTo(1 + (int) Math.floor(Math.log(1000.0 / 5 + 1) / Math.log(2))).isEqualTo(8);
    assertThat(sync.startsOf("a")).hasSize(13);
    assertThat(queue.numRequeues("a")).isEqualTo(13);
  }

  @Test
  void successWithADelayResyncsTheKeyAfterIt() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = running(queue, new TimedSync(Duration.ZERO, key -> Outcome.resyncAfter(Duration.ofSeconds(60))));

    queue.add("a", CHANGED);
    advance(Duration.ofSeconds(150));

    assertThat(sync.startsOf("a")).containsExactly(0L, 60_000L, 120_000L);
  }

  @Test
  void errorsAndExceptionsOfTheSyncBecomeFailuresAndTheOtherKeysGoOn() {
    KeyedWorkQueue<String> queue = queue(2);
    List<String> succeeded = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Void> processing = queue.process((key, causes) -> switch (key) {
      case "throws" -> throw new IllegalStateException("boom");
      case "errors" -> Mono.error(new IllegalArgumentException("bad"));
      case "null" -> null;
      default -> {
        succeeded.add(key);
        yield Mono.empty();
      }
    }).toFuture();
    for (String key : List.of("throws", "errors", "null", "fine", "also-fine")) {
      queue.add(key, CHANGED);
    }

    assertThat(succeeded).containsExactly("fine", "also-fine");
    assertThat(queue.numRequeues("throws")).isEqualTo(1);
    assertThat(queue.numRequeues("errors")).isEqualTo(1);
    assertThat(queue.numRequeues("null")).isEqualTo(1);
    assertThat(processing).isNotDone();

    queue.add("later", CHANGED);
    assertThat(succeeded).containsExactly("fine", "also-fine", "later");
  }

  @Test
  void shutdownRefusesAddsRunsWhatWaitsAndCompletes() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = new TimedSync(Duration.ofSeconds(1), key -> Outcome.success());
    CompletableFuture<Void> processing = queue.process((key, causes) -> sync.apply(key)).toFuture();
    queue.add("a", CHANGED);
    queue.add("b", CHANGED);
    queue.addAfter("delayed", Duration.ofMillis(500), LATER);

    CompletableFuture<Boolean> drained = queue.shutDown(Duration.ofMinutes(1)).toFuture();
    queue.add("c", CHANGED);
    queue.addAfter("d", Duration.ofMillis(1), LATER);
    assertThat(queue.isShuttingDown()).isTrue();
    advance(Duration.ofMillis(1_999));
    assertThat(drained).isNotDone();
    advance(Duration.ofMillis(1));

    assertThat(drained).isCompletedWithValue(true);
    assertThat(processing).isCompleted();
    assertThat(sync.starts.keySet()).containsExactlyInAnyOrder("a", "b");
    assertThat(queue.stateCount()).isZero();
    assertThat(queue.shutDown(Duration.ZERO).block()).as("a second shutdown reports the first").isTrue();
  }

  @Test
  void aKeyAddedWhileRunningBeforeShutdownStillRunsAgain() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());
    queue.add("a", CHANGED);
    queue.add("a", CHANGED);

    CompletableFuture<Boolean> drained = queue.shutDown(Duration.ofMinutes(1)).toFuture();
    sync.finish("a", Outcome.failed());
    assertThat(sync.started).containsExactly("a", "a");
    assertThat(drained).isNotDone();
    sync.succeed("a");

    assertThat(drained).isCompletedWithValue(true);
    advance(Duration.ofMinutes(2));
    assertThat(sync.started).as("failed runs are not retried during shutdown").hasSize(2);
  }

  @Test
  void shutdownCancelsWhatStillRunsAtTheDeadline() {
    KeyedWorkQueue<String> queue = queue(2);
    ManualSync sync = new ManualSync();
    CompletableFuture<Void> processing = queue.process((key, causes) -> sync.apply(key)).toFuture();
    queue.add("stuck", CHANGED);
    queue.add("also-stuck", CHANGED);
    queue.add("waiting", CHANGED);

    CompletableFuture<Boolean> drained = queue.shutDown(Duration.ofSeconds(5)).toFuture();
    advance(Duration.ofMillis(4_999));
    assertThat(drained).isNotDone();
    advance(Duration.ofMillis(1));

    assertThat(drained).isCompletedWithValue(false);
    assertThat(sync.cancellations).hasValue(2);
    assertThat(processing).isCompleted();
    assertThat(sync.started).containsExactly("stuck", "also-stuck");
    assertThat(queue.stateCount()).isZero();
    assertThat(queue.depth()).isZero();
  }

  @Test
  void aZeroDrainTimeoutStopsAtOnce() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = new ManualSync();
    CompletableFuture<Void> processing = queue.process((key, causes) -> sync.apply(key)).toFuture();
    queue.add("a", CHANGED);

    assertThat(queue.shutDown(Duration.ZERO).toFuture()).isCompletedWithValue(false);
    assertThat(sync.cancellations).hasValue(1);
    assertThat(processing).isCompleted();
  }

  @Test
  void aCancelledRunIsQueuedAgain() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = TestSubscriber.<Work<String>>builder().initialRequest(0).build();
    queue.keys().subscribe(worker);
    queue.add("a", CHANGED);
    queue.add("b", CHANGED);
    worker.request(1);
    queue.done("a", Outcome.cancelled());
    worker.request(2);

    assertThat(keysOf(worker)).containsExactly("a", "b", "a");
  }

  @Test
  void stateIsKeptOnlyForActiveKeys() {
    KeyedWorkQueue<String> queue = queue(8);
    AtomicInteger k7Runs = new AtomicInteger();
    TimedSync sync = running(queue, new TimedSync(Duration.ofMillis(10),
        key -> key.equals("k7") && k7Runs.incrementAndGet() <= 2 ? Outcome.failed() : Outcome.success()));
    for (int i = 0; i < 1_000; i++) {
      queue.add("k" + i, CHANGED);
    }
    assertThat(queue.stateCount()).isEqualTo(1_000);
    advance(Duration.ofSeconds(2));

    assertThat(sync.starts).hasSize(1_000);
    assertThat(queue.stateCount()).as("only the failing key, backing off").isEqualTo(1);
    queue.forget("k7");
    assertThat(queue.numRequeues("k7")).isZero();
    assertThat(queue.stateCount()).as("its retry is still pending").isEqualTo(1);
    advance(Duration.ofSeconds(8));
    // the first retry (due at 1.01s) waits behind the 1,000 fresh keys (125 rounds of 10ms: less than the
    // background lane's patience), the second does not
    assertThat(sync.startsOf("k7")).containsExactly(0L, 1_250L, 3_260L);
    assertThat(queue.stateCount()).isZero();
  }

  // ---- causes, lanes and echoes

  private static final Trigger RESYNC = Trigger.of(Trigger.Cause.RESYNC_PERIOD);

  private static Trigger child(String name) {
    return Trigger.about(Trigger.Cause.CHILD, Trigger.Change.CREATED, "ConfigMap", "default", name);
  }

  private static Trigger echo(String name) {
    return Trigger.about(Trigger.Cause.ECHO, Trigger.Change.CREATED, "ConfigMap", "default", name);
  }

  private static TestSubscriber<Work<String>> worker(KeyedWorkQueue<String> queue) {
    TestSubscriber<Work<String>> worker = TestSubscriber.<Work<String>>builder().initialRequest(0).build();
    queue.keys().subscribe(worker);
    return worker;
  }

  private static Work<String> last(TestSubscriber<Work<String>> worker) {
    List<Work<String>> received = worker.getReceivedOnNext();
    return received.get(received.size() - 1);
  }

  @Test
  void aRunIsHandedOutWithHowLongItWaitedSinceTheFirstAddItCoalesced() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    queue.add("a", CHANGED);
    time.advanceTimeBy(Duration.ofMillis(30));
    queue.add("a", child("x-0"));
    time.advanceTimeBy(Duration.ofMillis(12));
    worker.request(1);

    assertThat(last(worker).causes().waitedNanos()).as("from the first add").isEqualTo(Duration.ofMillis(42).toNanos());
  }

  @Test
  void aRunIsHandedOutWithTheDistinctCausesItCoalescedTheFirstFewKeptTheOthersCounted() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    queue.add("a", CHANGED);
    queue.add("a", CHANGED);
    queue.add("a", child("x-0"));
    queue.add("a", child("x-0"));
    for (int i = 1; i <= 5; i++) {
      queue.add("a", child("x-" + i));
    }
    worker.request(1);

    Work<String> run = last(worker);
    assertThat(run.key()).isEqualTo("a");
    assertThat(run.causes().kept()).containsExactly(CHANGED, child("x-0"), child("x-1"), child("x-2"));
    assertThat(run.causes().dropped()).as("x-3, x-4 and x-5").isEqualTo(3);
    assertThat(run.causes()).hasToString("spec changed; child changed: ConfigMap default/x-0 (created); "
        + "child changed: ConfigMap default/x-1 (created); child changed: ConfigMap default/x-2 (created) (+3 more)");
  }

  @Test
  void anAddWhileAKeyRunsIsACauseOfItsNextRunNotOfTheCurrentOne() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    queue.add("a", CHANGED);
    worker.request(1);
    queue.add("a", child("x-0"));
    queue.done("a", Outcome.success());
    worker.request(1);

    assertThat(worker.getReceivedOnNext()).extracting(work -> work.causes().kept())
        .containsExactly(List.of(CHANGED), List.of(child("x-0")));
  }

  @Test
  void retriesAndResyncsNameTheirCause() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    queue.add("a", CHANGED);
    worker.request(3);
    queue.done("a", Outcome.failed());
    advance(Duration.ofSeconds(1));
    queue.done("a", Outcome.resyncAfter(Duration.ofSeconds(5)));
    advance(Duration.ofSeconds(5));

    assertThat(worker.getReceivedOnNext()).extracting(work -> work.causes().kept()).containsExactly(
        List.of(CHANGED), List.of(Trigger.of(Trigger.Cause.RETRY_FAILED)),
        List.of(Trigger.of(Trigger.Cause.RESYNC_AFTER)));
  }

  @Test
  void anAddOfAWaitingKeyWithAnEqualCauseAllocatesNothing() {
    KeyedWorkQueue<String> queue = queue(1);
    Trigger cause = child("x-0");
    queue.add("a", cause);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    for (int i = 0; i < 10_000; i++) {
      queue.add("a", cause); // warm up: class loading, the thread's AddCall
    }
    long before = threads.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < 100_000; i++) {
      queue.add("a", cause);
    }
    long allocated = threads.getCurrentThreadAllocatedBytes() - before;

    assertThat(allocated).as("bytes allocated by 100,000 adds (the measurement itself allocates a few)")
        .isLessThan(10_000);
  }

  @Test
  void freshKeysAreHandedOutBeforeBackgroundKeysEachLaneInOrder() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());
    queue.add("busy", RESYNC);
    queue.add("r1", RESYNC);
    queue.add("r2", RESYNC);
    queue.add("f1", CHANGED);
    queue.add("f2", child("x"));
    queue.add("f3", CHANGED);
    queue.add("f4", CHANGED);
    List<String> order = List.of("busy", "f1", "f2", "f3", "f4", "r1", "r2");
    for (String key : order) {
      sync.succeed(key);
    }

    assertThat(sync.started).as("a short burst of changes runs before any background key")
        .containsExactlyElementsOf(order);
  }

  @Test
  void onceTheBackgroundLaneWaitedItsPatienceEveryFourthHandOutIsItsSoResyncsAreNeverStarved() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());
    queue.add("busy", CHANGED);
    queue.add("r1", RESYNC);
    queue.add("r2", RESYNC);
    advance(KeyedWorkQueue.BACKGROUND_PATIENCE);
    for (int i = 1; i <= 8; i++) {
      queue.add("f" + i, CHANGED);
    }
    List<String> order = List.of("busy", "f1", "f2", "r1", "f3", "f4", "f5", "r2", "f6", "f7", "f8");
    for (String key : order) {
      sync.succeed(key);
    }

    assertThat(sync.started).containsExactlyElementsOf(order);
  }

  @Test
  void aBackgroundKeyThatGetsAFreshCauseMovesToTheFreshLane() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());
    queue.add("busy", RESYNC);
    queue.add("r1", RESYNC);
    queue.add("r2", RESYNC);
    queue.add("r2", CHANGED);
    queue.add("r1", RESYNC);
    sync.succeed("busy", "r2", "r1");

    assertThat(sync.started).containsExactly("busy", "r2", "r1");
    assertThat(queue.depth()).isZero();
  }

  @Test
  void aKeyDirtiedByAFreshCauseWhileRunningWaitsInTheFreshLane() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());
    queue.add("a", RESYNC);
    queue.add("r1", RESYNC);
    queue.add("a", RESYNC);
    queue.add("a", CHANGED);
    sync.succeed("a", "a", "r1");

    assertThat(sync.started).containsExactly("a", "a", "r1");
  }

  @Test
  void echoesOfAKeyThatIsNotWaitingMakeOneRunAfterTheEchoWindow() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    worker.request(10);
    queue.add("a", CHANGED);
    queue.add("a", echo("x-0")); // while a runs: not a re-run at once
    advance(Duration.ofMillis(10));
    queue.done("a", Outcome.success());
    queue.add("a", echo("x-1")); // after the run, within the window of the first echo
    queue.add("a", echo("x-2"));
    assertThat(worker.getReceivedOnNext()).hasSize(1);

    advance(KeyedWorkQueue.ECHO_WINDOW);
    assertThat(worker.getReceivedOnNext()).hasSize(2);
    assertThat(last(worker).causes().kept()).containsExactly(echo("x-0"), echo("x-1"), echo("x-2"));
    queue.done("a", Outcome.success());
    advance(Duration.ofSeconds(1));
    assertThat(worker.getReceivedOnNext()).as("one run for the three echoes").hasSize(2);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void theEchoWindowOfAnEchoThatCameWhileItsKeyRanStartsWhenTheRunEnds() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    worker.request(10);
    queue.add("a", CHANGED);
    queue.add("a", echo("x-0")); // the run's first write came back; the run still writes
    advance(KeyedWorkQueue.ECHO_WINDOW.multipliedBy(3));
    assertThat(worker.getReceivedOnNext()).as("no re-run while the run still writes").hasSize(1);
    queue.done("a", Outcome.success());
    advance(KeyedWorkQueue.ECHO_WINDOW.dividedBy(2));
    queue.add("a", Trigger.of(Trigger.Cause.ECHO)); // the run's last write (the status) came back after it
    assertThat(worker.getReceivedOnNext()).hasSize(1);

    advance(KeyedWorkQueue.ECHO_WINDOW.dividedBy(2));
    assertThat(worker.getReceivedOnNext()).as("one run for the echoes of the run's writes").hasSize(2);
    assertThat(last(worker).causes().kept()).containsExactly(echo("x-0"), Trigger.of(Trigger.Cause.ECHO));
    queue.done("a", Outcome.success());
    advance(Duration.ofSeconds(1));
    assertThat(worker.getReceivedOnNext()).hasSize(2);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void anEchoOfAWaitingKeyIsOnlyACauseAndAFreshAddDuringTheWindowRunsAtOnce() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<Work<String>> worker = worker(queue);
    queue.add("a", RESYNC);
    queue.add("a", echo("x-0"));
    worker.request(10);
    assertThat(last(worker).causes().kept()).containsExactly(RESYNC, echo("x-0"));
    queue.done("a", Outcome.success());

    queue.add("a", echo("x-1"));
    queue.add("a", CHANGED);
    assertThat(worker.getReceivedOnNext()).as("the change does not wait for the echo window").hasSize(2);
    assertThat(last(worker).causes().kept()).containsExactly(echo("x-1"), CHANGED);
  }
}
