package dev.metareactor.http.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@link MetricCatalogue} against what shows it and what uses it: {@code docs/metrics.md} documents every declared
 * metric with its type, labels and help, and nothing else; the Grafana dashboard queries only declared metrics; and
 * each metric Metareactor registers exports, on the engine's Prometheus registry, the name, type, labels and help the
 * page shows. ({@code GrafanaDashboardIT} holds a running engine's {@code /metrics} to the catalogue.)
 */
class MetricCatalogueTest {

  private static final Path ROOT = Path.of("..");
  /** A row of the page's tables: | `name` | type | `label`, `label` (or —) | help |. */
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| ([a-z]+) \\| ([^|]+) \\| ([^|]+) \\|$");

  @Test
  void thePageDocumentsEveryMetricWithItsTypeLabelsAndHelpAndNoOther() throws IOException {
    Map<String, String> documented = new TreeMap<>();
    for (String line : Files.readAllLines(ROOT.resolve("docs/metrics.md"))) {
      Matcher row = ROW.matcher(line);
      if (row.matches()) {
        String previous = documented.put(row.group(1), row.group(2) + " | " + row.group(3) + " | " + row.group(4));
        assertThat(previous).as("%s documented twice", row.group(1)).isNull();
      }
    }
    Map<String, String> declared = new TreeMap<>();
    for (Metric metric : MetricCatalogue.all()) {
      String labels = metric.labels().isEmpty() ? "—"
          : metric.labels().stream().map(label -> "`" + label + "`").collect(Collectors.joining(", "));
      declared.put(metric.prometheusName(), metric.type().prometheus() + " | " + labels + " | " + metric.help());
    }
    List<String> problems = new ArrayList<>();
    declared.forEach((name, row) -> {
      String page = documented.get(name);
      if (page == null) {
        problems.add(name + " is declared but not documented: " + row);
      } else if (!page.equals(row)) {
        problems.add(name + " is documented as \"" + page + "\", declared as \"" + row + "\"");
      }
    });
    documented.keySet().stream().filter(name -> !declared.containsKey(name))
        .forEach(name -> problems.add(name + " is documented but not declared"));
    assertThat(problems).as("docs/metrics.md against MetricCatalogue (type | labels | help)").isEmpty();
  }

  @Test
  void theDashboardQueriesOnlyDeclaredMetrics() throws IOException {
    Set<String> queried = DashboardQueries.series(ROOT.resolve("manifests/grafana/metareactor-dashboard.json"));
    assertThat(queried).as("the dashboard's series not in MetricCatalogue")
        .filteredOn(series -> CatalogueCheck.declaringSeries(series).isEmpty()).isEmpty();
  }

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
