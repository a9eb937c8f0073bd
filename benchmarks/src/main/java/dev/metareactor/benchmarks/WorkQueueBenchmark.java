package dev.metareactor.benchmarks;

import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.queue.KeyedWorkQueue;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.queue.WorkQueueOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The engine's {@link KeyedWorkQueue} over 10,000 keys, with the production scheduler
 * ({@code Schedulers.parallel()}), {@code System.nanoTime} and the metrics recorded into a
 * {@link SimpleMeterRegistry} (histograms with client-go's 12 buckets, as in production).
 *
 * <ul>
 *   <li>{@code addCoalesced} — one {@code add} of a key that is already waiting (every key is queued and nothing
 *       consumes them): the cost an informer event storm pays per event. Score: adds per second.
 *   <li>{@code addAndProcess} — add 10,000 distinct idle keys, then wait until a no-op sync has run each of them
 *       through {@code process} with 1, 4 or 64 workers: add, emission on demand, subscription of the sync on the
 *       scheduler, {@code done}, metrics. Score: keys processed end to end per second
 *       ({@code @OperationsPerInvocation(10_000)}). Four sets of keys take turns, so a round never adds a key of
 *       the round before it, which may still be finishing its {@code done}.
 * </ul>
 *
 * <p>Command: {@code java -jar benchmarks/target/benchmarks.jar WorkQueueBenchmark -f 1 -wi 2 -i 3 -w 2s -r 2s
 * -prof gc}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class WorkQueueBenchmark {

  /** The cause of every add: a change, which waits in the fresh lane. */
  private static final Trigger CHANGED = Trigger.of(Trigger.Cause.SPEC);

  static final int KEYS = 10_000;

  /** A queue in which every key is already waiting. */
  @State(Scope.Thread)
  public static class Waiting {
    KeyedWorkQueue<Integer> queue;
    Integer[] keys;
    int next;

    @Setup(Level.Trial)
    public void fill() {
      queue = new KeyedWorkQueue<>(WorkQueueOptions.of("benchmark-waiting", "benchmark", 1),
          Scheduling.production(), new SimpleMeterRegistry());
      keys = keySet(0);
      for (Integer key : keys) {
        queue.add(key, CHANGED);
      }
    }

    @TearDown(Level.Trial)
    public void stop() {
      queue.shutDown(Duration.ZERO).block();
    }
  }

  /** A queue processed by {@code workers} no-op syncs, each releasing one permit. */
  @State(Scope.Thread)
  public static class Processing {
    @Param({"1", "4", "64"})
    int workers;

    KeyedWorkQueue<Integer> queue;
    Integer[][] rounds;
    int round;
    final Semaphore processed = new Semaphore(0);
    Disposable processing;

    @Setup(Level.Trial)
    public void start() {
      queue = new KeyedWorkQueue<>(WorkQueueOptions.of("benchmark-processing", "benchmark", workers),
          Scheduling.production(), new SimpleMeterRegistry());
      rounds = new Integer[][] {keySet(0), keySet(1), keySet(2), keySet(3)};
      processing = queue.process((key, causes) -> {
        processed.release();
        return Mono.just(Outcome.success());
      }).subscribe();
    }

    @TearDown(Level.Trial)
    public void stop() {
      queue.shutDown(Duration.ofSeconds(10)).block();
      processing.dispose();
    }
  }

  @Benchmark
  public void addCoalesced(Waiting state) {
    state.queue.add(state.keys[state.next], CHANGED);
    state.next = state.next == KEYS - 1 ? 0 : state.next + 1;
  }

  @Benchmark
  @OperationsPerInvocation(KEYS)
  public void addAndProcess(Processing state) throws InterruptedException {
    Integer[] keys = state.rounds[state.round++ & 3];
    for (Integer key : keys) {
      state.queue.add(key, CHANGED);
    }
    state.processed.acquire(KEYS);
  }

  /** Distinct boxed keys, made once so that the benchmarks measure the queue and not boxing. */
  static Integer[] keySet(int set) {
    Integer[] keys = new Integer[KEYS];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = set * KEYS + i;
    }
    return keys;
  }
}
