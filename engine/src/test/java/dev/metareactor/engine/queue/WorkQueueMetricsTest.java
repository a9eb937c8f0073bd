package dev.metareactor.engine.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The {@code workqueue_*} meters of {@link KeyedWorkQueue}, driven in virtual time. */
class WorkQueueMetricsTest {

  /** The cause of the tests' adds: a change (fresh lane). */
  private static final Trigger CHANGED = Trigger.of(Trigger.Cause.SPEC);
  /** The cause of the tests' delayed adds. */
  private static final Trigger LATER = Trigger.of(Trigger.Cause.RESYNC_AFTER);

  private static final Tags TAGS = Tags.of("name", "CompositeController-web", "controller", "web");

  private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void stopTime() {
    time.dispose();
  }

  private KeyedWorkQueue<String> queue() {
    return new KeyedWorkQueue<>(WorkQueueOptions.of("CompositeController-web", "web", 2), time,
        () -> time.now(TimeUnit.NANOSECONDS), registry);
  }

  /** A queue of one worker whose every run takes two seconds. */
  private KeyedWorkQueue<String> oneWorkerOfTwoSecondRuns() {
    KeyedWorkQueue<String> queue = new KeyedWorkQueue<>(WorkQueueOptions.of("CompositeController-web", "web", 1),
        time, () -> time.now(TimeUnit.NANOSECONDS), registry);
    queue.process((key, causes) -> Mono.delay(Duration.ofSeconds(2), time).thenReturn(Outcome.success()))
        .subscribe();
    return queue;
  }

  private double gauge(String name) {
    return registry.get(name).tags(TAGS).gauge().value();
  }

  private Timer timer(String name) {
    return registry.get(name).tags(TAGS).timer();
  }

  @Test
  void metersHaveClientGoNamesUnitsAndTags() {
    queue();

    // a registry without native histograms (this one) adds a "<timer>.histogram" gauge per bucket
    assertThat(registry.getMeters()).extracting(meter -> meter.getId().getName())
        .filteredOn(name -> !name.endsWith(".histogram")).containsExactlyInAnyOrder(
        "workqueue.adds", "workqueue.retries", "workqueue.queue.duration", "workqueue.work.duration",
        "workqueue.depth", "workqueue.unfinished.work", "workqueue.longest.running.processor",
        "metareactor.queue.wait", "metareactor.queue.wait");
    for (Meter meter : registry.getMeters()) {
      assertThat(meter.getId().getTags()).containsAll(TAGS);
    }
    assertThat(registry.get("workqueue.adds").counter().getId().getType()).isEqualTo(Meter.Type.COUNTER);
    assertThat(registry.get("workqueue.unfinished.work").gauge().getId().getBaseUnit()).isEqualTo("seconds");
    assertThat(registry.get("workqueue.longest.running.processor").gauge().getId().getBaseUnit())
        .isEqualTo("seconds");
    assertThat(registry.get("workqueue.depth").gauge().getId().getBaseUnit()).isNull();
  }

  @Test
  void timersAreHistogramsWithClientGoBuckets() {
    KeyedWorkQueue<String> queue = queue();
    queue.process((key, causes) -> Mono.delay(Duration.ofMillis(50), time).thenReturn(Outcome.success())).subscribe();
    queue.add("a", CHANGED);
    time.advanceTimeBy(Duration.ofSeconds(1));

    CountAtBucket[] buckets = timer("workqueue.work.duration").takeSnapshot().histogramCounts();
    assertThat(buckets).extracting(bucket -> bucket.bucket(TimeUnit.NANOSECONDS))
        .containsExactly(1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12);
    assertThat(Arrays.stream(buckets).filter(bucket -> bucket.bucket(TimeUnit.MILLISECONDS) >= 100))
        .allSatisfy(bucket -> assertThat(bucket.count()).isEqualTo(1));
    assertThat(Arrays.stream(buckets).filter(bucket -> bucket.bucket(TimeUnit.MILLISECONDS) < 100))
        .allSatisfy(bucket -> assertThat(bucket.count()).isZero());
  }

  @Test
  void countersGaugesAndTimersFollowTheWork() {
    KeyedWorkQueue<String> queue = queue();
    queue.add("a", CHANGED);
    queue.add("a", CHANGED);
    queue.add("b", CHANGED);
    queue.add("c", CHANGED);
    queue.addAfter("d", Duration.ofSeconds(100), LATER);
    assertThat(registry.get("workqueue.adds").counter().count()).isEqualTo(3);
    assertThat(registry.get("workqueue.retries").counter().count()).isEqualTo(1);
    assertThat(gauge("workqueue.depth")).isEqualTo(3);

    time.advanceTimeBy(Duration.ofSeconds(3));
    queue.process((key, causes) -> Mono.delay(Duration.ofSeconds(10), time).thenReturn(Outcome.success())).subscribe();
    assertThat(gauge("workqueue.depth")).as("c waits for a worker").isEqualTo(1);
    assertThat(timer("workqueue.queue.duration").count()).isEqualTo(2);
    assertThat(timer("workqueue.queue.duration").totalTime(TimeUnit.SECONDS)).isEqualTo(6);

    time.advanceTimeBy(Duration.ofSeconds(4));
    assertThat(gauge("workqueue.unfinished.work")).isEqualTo(8);
    assertThat(gauge("workqueue.longest.running.processor")).isEqualTo(4);

    time.advanceTimeBy(Duration.ofSeconds(6));
    assertThat(gauge("workqueue.depth")).isZero();
    assertThat(timer("workqueue.queue.duration").max(TimeUnit.SECONDS)).as("c waited 3s + 10s").isEqualTo(13);
    assertThat(gauge("workqueue.longest.running.processor")).isZero();
    assertThat(timer("workqueue.work.duration").count()).isEqualTo(2);
    assertThat(timer("workqueue.work.duration").totalTime(TimeUnit.SECONDS)).isEqualTo(20);
  }

  /**
   * The wait of each key is also kept by the lane it was taken from: with the one worker busy, a resync (background)
   * and then an edit (fresh) wait; the edit goes first, the resync after it.
   */
  @Test
  void eachKeysWaitIsAlsoKeptByItsLane() {
    KeyedWorkQueue<String> queue = oneWorkerOfTwoSecondRuns();
    queue.add("busy", CHANGED);
    queue.add("resynced", Trigger.of(Trigger.Cause.RESYNC_PERIOD));
    time.advanceTimeBy(Duration.ofMillis(500));
    queue.add("edited", CHANGED);
    time.advanceTimeBy(Duration.ofSeconds(10));

    Timer fresh = registry.get("metareactor.queue.wait").tags(TAGS).tag("lane", "fresh").timer();
    Timer background = registry.get("metareactor.queue.wait").tags(TAGS).tag("lane", "background").timer();
    assertThat(fresh.count()).as("busy and edited").isEqualTo(2);
    assertThat(fresh.max(TimeUnit.MILLISECONDS)).as("edited waited for busy's run").isEqualTo(1500);
    assertThat(background.count()).isEqualTo(1);
    assertThat(background.max(TimeUnit.MILLISECONDS)).as("resynced waited for busy and edited").isEqualTo(4000);
    assertThat(timer("workqueue.queue.duration").count()).isEqualTo(3);
    assertThat(background.takeSnapshot().histogramCounts()).extracting(bucket -> bucket.bucket(TimeUnit.MILLISECONDS))
        .contains(1.0, 100.0, 1_000.0, 5_000.0, 300_000.0);
  }

  @Test
  void aNewQueueWithTheSameNameTakesTheGaugesOverAndTheLastOneRemovesEverything() {
    KeyedWorkQueue<String> old = queue();
    old.add("x", CHANGED);
    KeyedWorkQueue<String> replacement = queue();
    replacement.add("y", CHANGED);
    replacement.add("z", CHANGED);
    assertThat(gauge("workqueue.depth")).isEqualTo(2);
    assertThat(registry.get("workqueue.adds").counter().count()).as("shared counter").isEqualTo(3);

    old.shutDown(Duration.ZERO).block();
    assertThat(gauge("workqueue.depth")).as("the old queue left the new one's gauges").isEqualTo(2);
    assertThat(registry.get("workqueue.adds").counter().count()).isEqualTo(3);

    replacement.shutDown(Duration.ZERO).block();
    assertThat(registry.getMeters()).isEmpty();
  }

  /**
   * A key waiting for a resync that a change reaches waits in the fresh lane from that change: the fresh lane's
   * wait is how long the change waited, whether the key was queued (promoted) or running (dirty) when it came; the
   * queue duration still counts from the first add.
   */
  @Test
  void aResyncJoinedByAChangeCountsItsFreshWaitFromTheChange() {
    KeyedWorkQueue<String> queue = oneWorkerOfTwoSecondRuns();
    queue.add("busy", CHANGED); // runs 0-2s
    queue.add("queued", Trigger.of(Trigger.Cause.RESYNC_PERIOD));
    time.advanceTimeBy(Duration.ofMillis(1500));
    queue.add("queued", CHANGED); // promoted at 1.5s, runs 2-4s
    time.advanceTimeBy(Duration.ofMillis(1000));
    queue.add("busy", Trigger.of(Trigger.Cause.RESYNC_PERIOD)); // queued at 2.5s in the background lane
    time.advanceTimeBy(Duration.ofMillis(1000));
    queue.add("busy", CHANGED); // promoted at 3.5s, runs 4-6s
    time.advanceTimeBy(Duration.ofSeconds(1));
    queue.add("resynced", Trigger.of(Trigger.Cause.RESYNC_PERIOD)); // at 4.5s, runs 6-8s
    time.advanceTimeBy(Duration.ofSeconds(10));

    Timer fresh = registry.get("metareactor.queue.wait").tags(TAGS).tag("lane", "fresh").timer();
    assertThat(fresh.count()).isEqualTo(3);
    assertThat(fresh.totalTime(TimeUnit.MILLISECONDS)).as("busy 0s, queued 0.5s, busy again 0.5s").isEqualTo(1000);
    Timer queueDuration = timer("workqueue.queue.duration");
    assertThat(queueDuration.count()).isEqualTo(4);
    assertThat(queueDuration.totalTime(TimeUnit.MILLISECONDS)).as("0 + 2 + 1.5 + 1.5 s").isEqualTo(5000);
  }

  /** A running key that a change reaches after a resync came for it waits in the fresh lane from the change. */
  @Test
  void aRunningKeyMarkedForAResyncThenChangedCountsItsFreshWaitFromTheChange() {
    KeyedWorkQueue<String> queue = oneWorkerOfTwoSecondRuns();
    queue.add("a", CHANGED); // runs 0-2s
    time.advanceTimeBy(Duration.ofMillis(500));
    queue.add("a", Trigger.of(Trigger.Cause.RESYNC_PERIOD)); // dirty at 0.5s
    time.advanceTimeBy(Duration.ofMillis(1000));
    queue.add("a", CHANGED); // fresh at 1.5s; runs again at 2s
    time.advanceTimeBy(Duration.ofSeconds(10));

    Timer fresh = registry.get("metareactor.queue.wait").tags(TAGS).tag("lane", "fresh").timer();
    assertThat(fresh.count()).isEqualTo(2);
    assertThat(fresh.max(TimeUnit.MILLISECONDS)).as("from the change at 1.5s to its run at 2s").isEqualTo(500);
    assertThat(timer("workqueue.queue.duration").max(TimeUnit.MILLISECONDS)).isEqualTo(1500);
  }
}
