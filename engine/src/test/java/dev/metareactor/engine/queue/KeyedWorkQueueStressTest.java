package dev.metareactor.engine.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.RetrySettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Several producer threads add and delay-add thousands of keys while 16 workers sync them, each run taking up to
 * a millisecond on another scheduler, and some runs fail. Like an informer seeing the writes of a sync, half of
 * the runs ask a producer to update and re-add their key while they are still running ("echoes"), so adds of
 * running keys are frequent and the load follows the workers instead of piling up behind them.
 *
 * <p>Every producer bumps a key's version before it adds the key; a run records the version it saw when it
 * started and, when it succeeds, that version as the key's last synced one. At the end:
 *
 * <ul>
 *   <li>no two runs of one key ever overlapped;
 *   <li>no update was lost: every key's last successful run saw the key's final version (the test waits, with a
 *       bounded timeout, until that holds for every key; a lost add would leave its key behind forever);
 *   <li>the queue shuts down drained, with nothing waiting.
 * </ul>
 */
class KeyedWorkQueueStressTest {

  /** The cause of the tests' adds: a change (fresh lane). */
  private static final Trigger CHANGED = Trigger.of(Trigger.Cause.SPEC);
  /** The cause of the tests' delayed adds. */
  private static final Trigger LATER = Trigger.of(Trigger.Cause.RESYNC_AFTER);

  private static final int KEYS = 5_000;
  private static final int PRODUCERS = 4;
  /** Producers go on until the workers have run this many syncs, so production overlaps many runs of each key. */
  private static final long RUNS_WHILE_PRODUCING = 20_000;

  /** Keys are records in the engine; so here. */
  private record Key(int id) { }

  private final Scheduler timers = Schedulers.newParallel("stress-queue", 2);
  private final Scheduler hooks = Schedulers.newParallel("stress-hooks", 2);

  private final Key[] keys = IntStream.range(0, KEYS).mapToObj(Key::new).toArray(Key[]::new);
  private final AtomicIntegerArray versions = new AtomicIntegerArray(KEYS);
  private final AtomicIntegerArray lastSynced = new AtomicIntegerArray(KEYS);
  private final AtomicIntegerArray runningNow = new AtomicIntegerArray(KEYS);
  private final AtomicIntegerArray settled = new AtomicIntegerArray(KEYS);
  private final AtomicInteger overlaps = new AtomicInteger();
  private final AtomicLong runs = new AtomicLong();
  private final AtomicLong failedRuns = new AtomicLong();
  private final AtomicLong echoed = new AtomicLong();
  private final CountDownLatch allSettled = new CountDownLatch(KEYS);
  private final BlockingQueue<Integer> echoes = new LinkedBlockingQueue<>();
  private final AtomicReference<Throwable> processFailure = new AtomicReference<>();
  private volatile boolean producersDone;

  @AfterEach
  void stopSchedulers() {
    timers.dispose();
    hooks.dispose();
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void noKeyRunsTwiceAtOnceAndNoUpdateIsLost() throws Exception {
    RetrySettings retry = new RetrySettings(Duration.ofMillis(1), Duration.ofMillis(20), new RateLimit(1e6, 1000));
    KeyedWorkQueue<Key> queue = new KeyedWorkQueue<>(new WorkQueueOptions("stress", "stress", 16, retry),
        timers, System::nanoTime, new SimpleMeterRegistry());
    queue.process((key, causes) -> sync(key)).subscribe(null, processFailure::set);

    List<Thread> producers = new ArrayList<>();
    for (int p = 0; p < PRODUCERS; p++) {
      int first = p * (KEYS / PRODUCERS);
      Thread producer = new Thread(() -> produce(queue, first), "producer-" + p);
      producers.add(producer);
      producer.start();
    }
    for (Thread producer : producers) {
      producer.join();
    }
    assertThat(echoed.get()).as("adds of running keys").isGreaterThan(RUNS_WHILE_PRODUCING / 10);
    producersDone = true;
    assertThat(overlaps).as("overlapping runs of one key").hasValue(0);
    assertThat(processFailure.get()).as("processing failed").isNull();
    for (int k = 0; k < KEYS; k++) {
      settleIfFinal(k);
    }

    boolean settledInTime = allSettled.await(1, TimeUnit.MINUTES);
    assertThat(settledInTime)
        .as("keys whose last successful run missed their final version: %s", unsettledKeys())
        .isTrue();
    assertThat(failedRuns.get()).as("failed runs, retried").isPositive();

    assertThat(queue.shutDown(Duration.ofSeconds(30)).block()).as("drained").isTrue();
    assertThat(queue.depth()).isZero();
    assertThat(queue.stateCount()).isZero();
  }

  private void produce(KeyedWorkQueue<Key> queue, int firstKey) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int k = firstKey; k < firstKey + KEYS / PRODUCERS; k++) {
      update(queue, k, random);
    }
    while (runs.get() < RUNS_WHILE_PRODUCING && processFailure.get() == null) {
      Integer echo;
      try {
        echo = echoes.poll(100, TimeUnit.MICROSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (echo != null) {
        echoed.incrementAndGet();
        update(queue, echo, random);
      }
      if (random.nextInt(16) == 0) {
        update(queue, random.nextInt(KEYS), random);
      }
    }
  }

  private void update(KeyedWorkQueue<Key> queue, int k, ThreadLocalRandom random) {
    versions.incrementAndGet(k);
    if (random.nextInt(50) == 0) {
      queue.addAfter(keys[k], Duration.ofMillis(random.nextInt(1, 5)), LATER);
    } else {
      queue.add(keys[k], CHANGED);
    }
  }

  private Mono<Outcome> sync(Key key) {
    int k = key.id();
    return Mono.fromCallable(() -> {
          runs.incrementAndGet();
          if (runningNow.incrementAndGet(k) != 1) {
            overlaps.incrementAndGet();
          }
          int seen = versions.get(k);
          if (!producersDone && ThreadLocalRandom.current().nextBoolean()) {
            echoes.add(k);
          }
          return seen;
        })
        .delayElement(Duration.ofNanos(ThreadLocalRandom.current().nextLong(1_000_000)), hooks)
        .map(seen -> {
          runningNow.decrementAndGet(k);
          if (ThreadLocalRandom.current().nextInt(20) == 0) {
            failedRuns.incrementAndGet();
            return Outcome.failed();
          }
          lastSynced.set(k, seen);
          settleIfFinal(k);
          return Outcome.success();
        });
  }

  private void settleIfFinal(int k) {
    if (producersDone && lastSynced.get(k) == versions.get(k) && settled.compareAndSet(k, 0, 1)) {
      allSettled.countDown();
    }
  }

  private List<Integer> unsettledKeys() {
    List<Integer> unsettled = new ArrayList<>();
    for (int k = 0; k < KEYS && unsettled.size() < 20; k++) {
      if (settled.get(k) == 0) {
        unsettled.add(k);
      }
    }
    return unsettled;
  }
}
