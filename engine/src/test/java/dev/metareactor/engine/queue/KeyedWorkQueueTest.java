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
    queue.process(sync).subscribe();
    return sync;
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
    queue.add("a");
    queue.add("a");
    queue.add("a");
    queue.add("b");
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
    queue.add("a");
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
      queue.add(key);
    }
    ManualSync sync = running(queue, new ManualSync());
    queue.add("d");
    sync.succeed("c");
    queue.add("c");
    sync.succeed("a", "b", "d", "c");

    assertThat(sync.started).containsExactly("c", "a", "b", "d", "c");
  }

  @Test
  void aKeyNeverRunsTwiceAtOnceAndAnAddWhileItRunsRunsItOnceMore() {
    KeyedWorkQueue<String> queue = queue(4);
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a");
    queue.add("a");
    queue.add("a");
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
      queue.add("k" + i);
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
    TestSubscriber<String> subscriber = TestSubscriber.<String>builder().initialRequest(0).build();
    queue.keys().subscribe(subscriber);
    queue.add("a");
    queue.add("b");
    queue.add("c");
    assertThat(subscriber.getReceivedOnNext()).isEmpty();

    subscriber.request(2);
    assertThat(subscriber.getReceivedOnNext()).containsExactly("a", "b");
    assertThat(queue.depth()).isEqualTo(1);

    queue.done("a", Outcome.success());
    assertThat(subscriber.getReceivedOnNext()).as("done without demand emits nothing").hasSize(2);
    subscriber.request(1);
    assertThat(subscriber.getReceivedOnNext()).containsExactly("a", "b", "c");
  }

  @Test
  void keysAllowsOneSubscriber() {
    KeyedWorkQueue<String> queue = queue(1);
    queue.keys().subscribe(TestSubscriber.create());
    TestSubscriber<String> second = TestSubscriber.create();
    queue.keys().subscribe(second);

    assertThat(second.expectTerminalError()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("test-queue");
  }

  @Test
  void doneOfAKeyThatIsNotRunningIsRejected() {
    KeyedWorkQueue<String> queue = queue(1);
    queue.add("a");

    assertThatThrownBy(() -> queue.done("a", Outcome.success()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("a is not running");
  }

  @Test
  void aDelayedAddRunsAtItsDueTime() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = running(queue, instantSuccess());

    queue.addAfter("a", Duration.ofSeconds(10));
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

    queue.addAfter("later-first", Duration.ofSeconds(10));
    queue.addAfter("later-first", Duration.ofSeconds(5));
    queue.addAfter("sooner-first", Duration.ofSeconds(5));
    queue.addAfter("sooner-first", Duration.ofSeconds(10));
    advance(Duration.ofSeconds(30));

    assertThat(sync.startsOf("later-first")).containsExactly(5_000L);
    assertThat(sync.startsOf("sooner-first")).containsExactly(5_000L);
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void anAddWhileADelayedAddIsPendingRunsNowAndTheDelayedAddStillFires() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = running(queue, instantSuccess());

    queue.addAfter("a", Duration.ofSeconds(10));
    advance(Duration.ofSeconds(1));
    queue.add("a");
    assertThat(sync.startsOf("a")).containsExactly(1_000L);
    advance(Duration.ofSeconds(20));
    assertThat(sync.startsOf("a")).containsExactly(1_000L, 10_000L);
  }

  @Test
  void failedRunsBackOffExponentiallyPerKeyUpToTheMaximum() {
    KeyedWorkQueue<String> queue = queue(2);
    TimedSync sync = running(queue, new TimedSync(Duration.ZERO,
        key -> key.equals("bad") ? Outcome.failed() : Outcome.success()));

    queue.add("bad");
    queue.add("good");
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
      queue.add(key);
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

    queue.add("a");
    sync.finish("a", Outcome.failed());
    advance(Duration.ofSeconds(1));
    queue.add("a");

    assertThat(sync.startMillis).containsExactly(0L, 1_000L);
    sync.succeed("a");
    assertThat(queue.numRequeues("a")).isZero();
  }

  @Test
  void successAndForgetResetTheFailureCount() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a");
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
    TestSubscriber<String> worker = TestSubscriber.create();
    queue.keys().subscribe(worker);
    queue.add("a");
    queue.shutDown(Duration.ofMinutes(1));
    queue.add("b");
    queue.done("a", Outcome.failed());

    assertThat(worker.getReceivedOnNext()).containsExactly("a");
    assertThat(worker.isTerminatedComplete()).isTrue();
    assertThat(queue.stateCount()).isZero();
  }

  @Test
  void retryAfterRunsTheKeyAgainWithoutCountingAFailure() {
    KeyedWorkQueue<String> queue = queue(1);
    ManualSync sync = running(queue, new ManualSync());

    queue.add("a");
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

    queue.add("a");
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

    queue.add("a");
    advance(Duration.ofSeconds(150));

    assertThat(sync.startsOf("a")).containsExactly(0L, 60_000L, 120_000L);
  }

  @Test
  void errorsAndExceptionsOfTheSyncBecomeFailuresAndTheOtherKeysGoOn() {
    KeyedWorkQueue<String> queue = queue(2);
    List<String> succeeded = Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<Void> processing = queue.process(key -> switch (key) {
      case "throws" -> throw new IllegalStateException("boom");
      case "errors" -> Mono.error(new IllegalArgumentException("bad"));
      case "null" -> null;
      default -> {
        succeeded.add(key);
        yield Mono.empty();
      }
    }).toFuture();
    for (String key : List.of("throws", "errors", "null", "fine", "also-fine")) {
      queue.add(key);
    }

    assertThat(succeeded).containsExactly("fine", "also-fine");
    assertThat(queue.numRequeues("throws")).isEqualTo(1);
    assertThat(queue.numRequeues("errors")).isEqualTo(1);
    assertThat(queue.numRequeues("null")).isEqualTo(1);
    assertThat(processing).isNotDone();

    queue.add("later");
    assertThat(succeeded).containsExactly("fine", "also-fine", "later");
  }

  @Test
  void shutdownRefusesAddsRunsWhatWaitsAndCompletes() {
    KeyedWorkQueue<String> queue = queue(1);
    TimedSync sync = new TimedSync(Duration.ofSeconds(1), key -> Outcome.success());
    CompletableFuture<Void> processing = queue.process(sync).toFuture();
    queue.add("a");
    queue.add("b");
    queue.addAfter("delayed", Duration.ofMillis(500));

    CompletableFuture<Boolean> drained = queue.shutDown(Duration.ofMinutes(1)).toFuture();
    queue.add("c");
    queue.addAfter("d", Duration.ofMillis(1));
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
    queue.add("a");
    queue.add("a");

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
    CompletableFuture<Void> processing = queue.process(sync).toFuture();
    queue.add("stuck");
    queue.add("also-stuck");
    queue.add("waiting");

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
    CompletableFuture<Void> processing = queue.process(sync).toFuture();
    queue.add("a");

    assertThat(queue.shutDown(Duration.ZERO).toFuture()).isCompletedWithValue(false);
    assertThat(sync.cancellations).hasValue(1);
    assertThat(processing).isCompleted();
  }

  @Test
  void aCancelledRunIsQueuedAgain() {
    KeyedWorkQueue<String> queue = queue(1);
    TestSubscriber<String> worker = TestSubscriber.<String>builder().initialRequest(0).build();
    queue.keys().subscribe(worker);
    queue.add("a");
    queue.add("b");
    worker.request(1);
    queue.done("a", Outcome.cancelled());
    worker.request(2);

    assertThat(worker.getReceivedOnNext()).containsExactly("a", "b", "a");
  }

  @Test
  void stateIsKeptOnlyForActiveKeys() {
    KeyedWorkQueue<String> queue = queue(8);
    AtomicInteger k7Runs = new AtomicInteger();
    TimedSync sync = running(queue, new TimedSync(Duration.ofMillis(10),
        key -> key.equals("k7") && k7Runs.incrementAndGet() <= 2 ? Outcome.failed() : Outcome.success()));
    for (int i = 0; i < 1_000; i++) {
      queue.add("k" + i);
    }
    assertThat(queue.stateCount()).isEqualTo(1_000);
    advance(Duration.ofSeconds(2));

    assertThat(sync.starts).hasSize(1_000);
    assertThat(queue.stateCount()).as("only the failing key, backing off").isEqualTo(1);
    queue.forget("k7");
    assertThat(queue.numRequeues("k7")).isZero();
    assertThat(queue.stateCount()).as("its retry is still pending").isEqualTo(1);
    advance(Duration.ofSeconds(8));
    // the first retry (due at 1.01s) waits behind the 1,000 keys (125 rounds of 10ms), the second does not
    assertThat(sync.startsOf("k7")).containsExactly(0L, 1_250L, 3_260L);
    assertThat(queue.stateCount()).isZero();
  }
}
