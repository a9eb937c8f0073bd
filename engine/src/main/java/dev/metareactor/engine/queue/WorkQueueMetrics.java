package dev.metareactor.engine.queue;

import dev.metareactor.http.metrics.Metric;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.stream.LongStream;

/**
 * The queue's meters, named so that a Prometheus registry exposes client-go's workqueue metrics:
 * {@code workqueue_depth}, {@code workqueue_adds_total}, {@code workqueue_retries_total},
 * {@code workqueue_queue_duration_seconds} and {@code workqueue_work_duration_seconds} (histograms with
 * client-go's buckets, 10ns to 1000s by factors of ten), {@code workqueue_unfinished_work_seconds} and
 * {@code workqueue_longest_running_processor_seconds}; tags {@code name} and {@code controller}.
 *
 * <p>Counters and timers with the same tags are shared by every queue that registers them, so a controller that
 * is restarted with a new queue keeps counting. Gauges read one live queue: a new queue takes them over from an
 * older one with the same tags, and a queue that terminates removes only the gauges it still owns, plus the
 * counters and timers when no newer queue has taken over (so a controller that is gone leaves no meters behind).
 */
final class WorkQueueMetrics {

  /** client-go's {@code ExponentialBuckets(10e-9, 10, 12)}. */
  static final Duration[] BUCKETS = buckets();
  /**
   * The lanes' buckets, 1 ms to 5 minutes: client-go's factors of ten say nothing between 0.1 and 1 s, where how
   * long a change waits and how late a resync runs are told apart.
   */
  static final Duration[] LANE_BUCKETS = LongStream.of(1, 5, 10, 25, 50, 100, 250, 500, 1_000,
      2_500, 5_000, 10_000, 30_000, 60_000, 300_000).mapToObj(Duration::ofMillis).toArray(Duration[]::new);

  private final MeterRegistry registry;
  private final Tags tags;
  final Counter adds;
  final Counter retries;
  final Timer queueDuration;
  final Timer workDuration;
  /** {@code metareactor_queue_wait_seconds} of keys taken from the fresh lane. */
  final Timer freshWait;
  /** {@code metareactor_queue_wait_seconds} of keys taken from the background lane. */
  final Timer backgroundWait;
  private final List<Gauge> gauges;

  WorkQueueMetrics(MeterRegistry registry, WorkQueueOptions options, KeyedWorkQueue<?> queue) {
    this.registry = registry;
    this.tags = Tags.of("name", options.name(), "controller", options.controller());
    this.adds = MetricCatalogue.WORKQUEUE_ADDS.counter()
        .tags(tags)
        .register(registry);
    this.retries = MetricCatalogue.WORKQUEUE_RETRIES.counter()
        .tags(tags)
        .register(registry);
    this.queueDuration = timer(MetricCatalogue.WORKQUEUE_QUEUE_DURATION);
    this.workDuration = timer(MetricCatalogue.WORKQUEUE_WORK_DURATION);
    this.freshWait = laneWait("fresh");
    this.backgroundWait = laneWait("background");
    this.gauges = List.of(
        gauge(MetricCatalogue.WORKQUEUE_DEPTH, queue, KeyedWorkQueue::depth),
        gauge(MetricCatalogue.WORKQUEUE_UNFINISHED_WORK, queue, KeyedWorkQueue::unfinishedWorkSeconds),
        gauge(MetricCatalogue.WORKQUEUE_LONGEST_RUNNING_PROCESSOR, queue, KeyedWorkQueue::longestRunningSeconds));
  }

  /**
   * A key taken from the fresh lane ({@code fresh}) or the background one: it waited {@code nanos} since its first
   * add ({@code workqueue_queue_duration_seconds}, as client-go counts it) and {@code inLaneNanos} in that lane.
   */
  void queued(long nanos, long inLaneNanos, boolean fresh) {
    queueDuration.record(nanos, TimeUnit.NANOSECONDS);
    (fresh ? freshWait : backgroundWait).record(inLaneNanos, TimeUnit.NANOSECONDS);
  }

  void worked(long nanos) {
    workDuration.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Removes this queue's gauges, and the shared meters too when no newer queue took the gauges over. */
  void close() {
    boolean owner = true;
    for (Gauge gauge : gauges) {
      if (registry.find(gauge.getId().getName()).tags(tags).gauge() == gauge) {
        registry.remove(gauge);
      } else {
        owner = false;
      }
    }
    if (owner) {
      for (Meter meter : List.of(adds, retries, queueDuration, workDuration, freshWait, backgroundWait)) {
        registry.remove(meter);
      }
      // Registries without native histograms publish each bucket as a gauge of its own.
      for (Timer timer : List.of(queueDuration, workDuration, freshWait, backgroundWait)) {
        registry.find(timer.getId().getName() + ".histogram").tags(tags).meters().forEach(registry::remove);
      }
    }
  }

  private Timer laneWait(String lane) {
    return MetricCatalogue.QUEUE_LANE_WAIT.timer()
        .tags(tags.and("lane", lane))
        .serviceLevelObjectives(LANE_BUCKETS)
        .register(registry);
  }

  private Timer timer(Metric metric) {
    return metric.timer()
        .tags(tags)
        .serviceLevelObjectives(BUCKETS)
        .register(registry);
  }

  private Gauge gauge(Metric metric, KeyedWorkQueue<?> queue, ToDoubleFunction<KeyedWorkQueue<?>> value) {
    Gauge previous = registry.find(metric.name()).tags(tags).gauge();
    if (previous != null) {
      registry.remove(previous);
    }
    return metric.gauge(queue, value)
        .tags(tags)
        .register(registry);
  }

  private static Duration[] buckets() {
    Duration[] buckets = new Duration[12];
    long nanos = 10;
    for (int i = 0; i < buckets.length; i++, nanos *= 10) {
      buckets[i] = Duration.ofNanos(nanos);
    }
    return buckets;
  }
}
