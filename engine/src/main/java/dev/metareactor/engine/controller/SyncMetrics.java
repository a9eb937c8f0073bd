package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One hosted controller's syncs, under the names controller-runtime gives its reconciles, so that the dashboards
 * and alerts written for controller-runtime operators work on Metareactor as they are:
 * {@code controller_runtime_reconcile_total{controller,result}} ({@code result}: {@code success}, {@code error},
 * {@code requeue} for a hook's 429, {@code requeue_after} for a resync the hook asked for),
 * {@code controller_runtime_reconcile_errors_total{controller}}, {@code controller_runtime_reconcile_time_seconds}
 * (a histogram), {@code controller_runtime_active_workers} and {@code controller_runtime_max_concurrent_reconciles}.
 * {@code controller} is the controller object's name. Beside them, Metareactor's own
 * {@code metareactor_child_conflicts_total{controller,resource,holder}}: desired children (attachments, outputs) whose
 * name an object holds that the parent does not observe ({@link ChildrenManager.Holder}), once per sync that finds
 * it; {@code metareactor_hot_loops_total{controller}}: parents found in a hot loop ({@link HotLoopGuard}), once per
 * hold. {@link #close} removes them all when the controller stops.
 */
final class SyncMetrics implements AutoCloseable, ChildrenManager.ConflictCounter {

  /** How a sync ended, as controller-runtime's {@code result} label says it. */
  enum Result {
    SUCCESS("success"), ERROR("error"), REQUEUE("requeue"), REQUEUE_AFTER("requeue_after");

    final String label;

    Result(String label) {
      this.label = label;
    }
  }

  private static final Duration[] BUCKETS = {Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
      Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
      Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
      Duration.ofSeconds(30), Duration.ofSeconds(60)};

  private final MeterRegistry registry;
  private final Map<Result, Counter> results = new EnumMap<>(Result.class);
  private final Counter errors;
  private final Counter hotLoops;
  private final Timer time;
  private final AtomicInteger active = new AtomicInteger();
  private final List<Meter> meters = new ArrayList<>();
  private final Map<ConflictKey, Counter> conflicts = new ConcurrentHashMap<>();
  private final Tags tags;

  private record ConflictKey(ApiResource resource, ChildrenManager.Holder holder) {}

  SyncMetrics(MeterRegistry registry, String controller, int workers) {
    this.registry = registry;
    this.tags = Tags.of("controller", controller);
    for (Result result : Result.values()) {
      results.put(result, keep(MetricCatalogue.RECONCILE.counter().tags(tags)
          .tag("result", result.label).register(registry)));
    }
    this.errors = keep(MetricCatalogue.RECONCILE_ERRORS.counter().tags(tags).register(registry));
    this.time = keep(MetricCatalogue.RECONCILE_TIME.timer().tags(tags)
        .serviceLevelObjectives(BUCKETS).register(registry));
    // Registered up front, at zero: an alert on its rate needs the series before the first loop.
    this.hotLoops = keep(MetricCatalogue.HOT_LOOPS.counter().tags(tags).register(registry));
    keep(MetricCatalogue.ACTIVE_WORKERS.gauge(active, AtomicInteger::get).tags(tags).register(registry));
    keep(MetricCatalogue.MAX_CONCURRENT_RECONCILES.gauge(() -> workers).tags(tags).register(registry));
  }

  private <M extends Meter> M keep(M meter) {
    meters.add(meter);
    return meter;
  }

  /** A sync starts; returns when it did, for {@link #ended}. */
  long started() {
    active.incrementAndGet();
    return System.nanoTime();
  }

  /** The sync that {@link #started} at {@code start} ended so. */
  void ended(long start, Result result) {
    active.decrementAndGet();
    time.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    Objects.requireNonNull(results.get(result), "one counter per result").increment();
    if (result == Result.ERROR) {
      errors.increment();
    }
  }

  /** A parent found in a hot loop, held back. */
  void hotLoop() {
    hotLoops.increment();
  }

  @Override
  public void counted(ApiResource resource, ChildrenManager.Holder holder) {
    conflicts.computeIfAbsent(new ConflictKey(resource, holder), key -> MetricCatalogue.CHILD_CONFLICTS.counter()
        .tags(tags)
        .tag("resource", resource.group().isEmpty() ? resource.resource()
            : resource.resource() + "." + resource.group())
        .tag("holder", holder.tag())
        .register(registry)).increment();
  }

  @Override
  public void close() {
    meters.forEach(registry::remove);
    conflicts.values().forEach(registry::remove);
    registry.find(MetricCatalogue.RECONCILE_TIME.name() + ".histogram").tags(tags).meters().forEach(registry::remove);
  }
}
