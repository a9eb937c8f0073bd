package dev.metareactor.http.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link MetricCatalogue}: each metric Metareactor registers exports, on the engine's Prometheus registry, the name,
 * type, labels and help the catalogue declares.
 */
class MetricCatalogueTest {

  @Test
  void eachMetricMetareactorRegistersExportsAsDeclared() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    List<Metric> own = MetricCatalogue.all().stream().filter(metric -> metric.binder() == null).toList();
    own.forEach(metric -> register(metric.name().contains(Metric.HOOK) ? metric.forHook("sync") : metric, registry));

    Exposition scrape = Exposition.parse(registry.scrape());
    assertThat(CatalogueCheck.disagreements(scrape)).isEmpty();
    assertThat(CatalogueCheck.exported(scrape)).containsExactlyInAnyOrderElementsOf(own);
    assertThat(scrape.families()).containsKeys("workqueue_adds_total", "controller_runtime_reconcile_time_seconds",
        "controller_runtime_reconcile_time_seconds_max", "metacontroller_sync_request_duration_histogram_seconds",
        "metareactor_hook_answers_bytes", "workqueue_unfinished_work_seconds");
  }

  @Test
  void namesAreUnique() {
    Map<String, Long> byName = MetricCatalogue.all().stream()
        .collect(Collectors.groupingBy(Metric::prometheusName, LinkedHashMap::new, Collectors.counting()));
    assertThat(byName).as("metrics declared more than once").allSatisfy((name, count) -> assertThat(count).isOne());
  }

  @Test
  void aMetricBuildsOnlyItsOwnMeter() {
    assertThatThrownBy(() -> MetricCatalogue.WORKQUEUE_DEPTH.counter())
        .hasMessage("workqueue.depth is a gauge, not a counter");
    assertThatThrownBy(() -> MetricCatalogue.WORKQUEUE_ADDS.timer())
        .hasMessage("workqueue.adds is a counter, not a timer");
    assertThatThrownBy(() -> MetricCatalogue.HOOK_RETRIES.counter())
        .hasMessage("metacontroller.<hook>.retries needs its hook type: forHook");
    assertThatThrownBy(() -> MetricCatalogue.WORKQUEUE_ADDS.forHook("sync"))
        .hasMessage("workqueue.adds is no hook's metric");
    Metric jvm = MetricCatalogue.all().stream().filter(metric -> metric.name().equals("jvm.memory.used")).findFirst()
        .orElseThrow();
    assertThatThrownBy(() -> jvm.gauge(() -> 1)).hasMessage("jvm.memory.used is registered by JvmMemoryMetrics");
    assertThat(MetricCatalogue.HOOK_REQUESTS.forHook("finalize").prometheusName())
        .isEqualTo("metacontroller_finalize_requests_total");
  }

  /** Registers one meter of {@code metric}, each label set. */
  private static void register(Metric metric, MeterRegistry registry) {
    Tags tags = Tags.empty();
    for (String label : metric.labels()) {
      tags = tags.and(label, "x");
    }
    switch (metric.type()) {
      case COUNTER -> metric.counter().tags(tags).register(registry);
      case GAUGE -> metric.gauge(() -> 1).tags(tags).register(registry);
      case HISTOGRAM -> metric.timer().serviceLevelObjectives(Duration.ofSeconds(1)).tags(tags).register(registry);
      case SUMMARY -> metric.timer().tags(tags).register(registry);
    }
  }
}
