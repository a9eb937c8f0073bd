package dev.metareactor.engine.queue;

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
import org.jspecify.annotations.Nullable;

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

  private final MeterRegistry registry;
  private final Tags tags;
  final Counter adds;
  final Counter retries;
  final Timer queueDuration;
  final Timer workDuration;
  private final List<Gauge> gauges;

  WorkQueueMetrics(MeterRegistry registry, WorkQueueOptions options, KeyedWorkQueue<?> queue) {
    this.registry = registry;
    this.tags = Tags.of("name", options.name(), "controller", options.controller());
    this.adds = Counter.builder("workqueue.adds")
        .description("Keys added to the work queue; adding a key that is already waiting is not counted")
        .tags(tags)
        .register(registry);
    this.retries = Counter.builder("workqueue.retries")
        .description("Delayed adds to the work queue: retries of failed runs, retry-after and resync-after")
        .tags(tags)
        .register(registry);
    this.queueDuration = timer("workqueue.queue.duration",
        "How long a key waited from its add until a worker took it");
    this.workDuration = timer("workqueue.work.duration", "How long one run of a key took");
    this.gauges = List.of(
        gauge("workqueue.depth", null, queue, KeyedWorkQueue::depth, "Keys waiting to run"),
        gauge("workqueue.unfinished.work", "seconds", queue, KeyedWorkQueue::unfinishedWorkSeconds,
            "Sum of how long the runs in progress have been running"),
        gauge("workqueue.longest.running.processor", "seconds", queue, KeyedWorkQueue::longestRunningSeconds,
            "How long the longest run in progress has been running"));
  }

  void queued(long nanos) {
    queueDuration.record(nanos, TimeUnit.NANOSECONDS);
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
      for (Meter meter : List.of(adds, retries, queueDuration, workDuration)) {
        registry.remove(meter);
      }
      // Registries without native histograms publish each bucket as a gauge of its own.
      for (Timer timer : List.of(queueDuration, workDuration)) {
        registry.find(timer.getId().getName() + ".histogram").tags(tags).meters().forEach(registry::remove);
      }
    }
  }

  private Timer timer(String name, String description) {
    return Timer.builder(name)
        .description(description)
        .tags(tags)
        .serviceLevelObjectives(BUCKETS)
        .register(registry);
  }

  private Gauge gauge(String name, @Nullable String baseUnit, KeyedWorkQueue<?> queue,
      ToDoubleFunction<KeyedWorkQueue<?>> value, String description) {
    Gauge previous = registry.find(name).tags(tags).gauge();
    if (previous != null) {
      registry.remove(previous);
    }
    return Gauge.builder(name, queue, value)
        .description(description)
        .tags(tags)
        .baseUnit(baseUnit)
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
