package dev.metareactor.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Turns {@code results.json} into {@code summary.md} (medians per engine and size, and each engine against the
 * first one) and {@code chart.png} (converge progress over time, and the medians as bars).
 */
final class Report {

  private Report() {}

  /** One row of the summary: a name, how to read it from a run, and whether less is better. */
  record Metric(String name, ToDoubleFunction<Results.Run> value, boolean time) {}

  static List<Metric> metrics(Results.Harness harness) {
    List<Metric> metrics = new ArrayList<>();
    String unit = unit(harness);
    metrics.add(new Metric("preview --all (s)", r -> seconds(r, "preview"), true));
    metrics.add(new Metric("preview: CPU (s)", r -> cpu(r, "preview"), false));
    metrics.add(new Metric("preview: hook calls", r -> field(r, "preview", p -> p.hookCalls()), false));
    metrics.add(new Metric("preview: writes listed", r -> extra(r, "preview", "writes"), false));
    metrics.add(new Metric("preview: API requests (reads and dry runs)", r -> requests(r, "preview"), false));
    metrics.add(new Metric("converge from scratch (s)", r -> seconds(r, "converge"), true));
    metrics.add(new Metric("converge: writes/s", r -> writes(r, "converge") / seconds(r, "converge"), false));
    metrics.add(new Metric("converge: engine CPU (s)", r -> cpu(r, "converge"), false));
    metrics.add(new Metric("converge: engine CPU until quiet (s)", r -> extra(r, "converge", "engineCpuSettled"),
        false));
    metrics.add(new Metric("converge: engine CPU per " + unit + " (ms)", r -> 1000 * cpu(r, "converge") / r.parents(),
        false));
    metrics.add(new Metric("converge: engine + hook CPU per " + unit + " (ms)",
        r -> 1000 * (cpu(r, "converge") + hookCpu(r, "converge")) / r.parents(), false));
    metrics.add(new Metric("converge: engine + hook CPU per " + unit + ", until quiet (ms)",
        r -> 1000 * (extra(r, "converge", "engineCpuSettled") + extra(r, "converge", "hookCpuSettled")) / r.parents(),
        false));
    metrics.add(new Metric("converge: hook calls/s", r -> hookCallsPerSecond(r, "converge"), false));
    metrics.add(new Metric("converge: hook calls per " + unit, r -> hookCallsPerUnit(r, "converge"), false));
    metrics.add(new Metric("converge: hook calls per " + unit + ", until quiet",
        r -> extra(r, "converge", "hookCallsSettled") / r.parents(), false));
    metrics.add(new Metric("converge: API requests", r -> requests(r, "converge"), false));
    metrics.add(new Metric("converge: status writes", r -> statusWrites(r, "converge"), false));
    metrics.add(new Metric("converge: control-plane CPU (s)", r -> field(r, "converge",
        Results.Phase::controlPlaneCpuSeconds), false));
    metrics.add(new Metric("converge: machine busy (%)", r -> busy(r, "converge"), false));
    metrics.add(new Metric("converge: ready after (s)", r -> extra(r, "converge", "readySeconds"), true));
    metrics.add(new Metric("update wave (s)", r -> seconds(r, "update"), true));
    metrics.add(new Metric("update: engine CPU (s)", r -> cpu(r, "update"), false));
    metrics.add(new Metric("update: engine CPU until quiet (s)", r -> extra(r, "update", "engineCpuSettled"),
        false));
    metrics.add(new Metric("update: engine CPU per " + unit + " (ms)", r -> 1000 * cpu(r, "update") / r.parents(),
        false));
    metrics.add(new Metric("update: engine + hook CPU per " + unit + " (ms)",
        r -> 1000 * (cpu(r, "update") + hookCpu(r, "update")) / r.parents(), false));
    metrics.add(new Metric("update: engine + hook CPU per " + unit + ", until quiet (ms)",
        r -> 1000 * (extra(r, "update", "engineCpuSettled") + extra(r, "update", "hookCpuSettled")) / r.parents(),
        false));
    metrics.add(new Metric("update: hook calls/s", r -> hookCallsPerSecond(r, "update"), false));
    metrics.add(new Metric("update: hook calls per " + unit, r -> hookCallsPerUnit(r, "update"), false));
    metrics.add(new Metric("update: hook calls per " + unit + ", until quiet",
        r -> extra(r, "update", "hookCallsSettled") / r.parents(), false));
    metrics.add(new Metric("update: API requests", r -> requests(r, "update"), false));
    metrics.add(new Metric("update: status writes", r -> statusWrites(r, "update"), false));
    metrics.add(new Metric("update: control-plane CPU (s)", r -> field(r, "update",
        Results.Phase::controlPlaneCpuSeconds), false));
    metrics.add(new Metric("update: machine busy (%)", r -> busy(r, "update"), false));
    metrics.add(new Metric("idle: engine CPU per minute (s)", r -> perMinute(r, cpu(r, "idle")), false));
    metrics.add(new Metric("idle: API requests per minute", r -> perMinute(r, requests(r, "idle")), false));
    metrics.add(new Metric("latency: edit to hook call p50 (ms)", r -> extra(r, "latency", "latencyP50Ms"), true));
    metrics.add(new Metric("latency: edit to hook call p99 (ms)", r -> extra(r, "latency", "latencyP99Ms"), true));
    for (String p : List.of("P50", "P90", "P99", "Max")) {
      metrics.add(new Metric("latency: edit to converged " + p.toLowerCase(Locale.ROOT) + " (ms)",
          r -> extra(r, "latency", "converged" + p + "Ms"), true));
    }
    metrics.add(new Metric("latency: edits timed to converged", r -> extra(r, "latency", "convergedCount"), false));
    // The engine's share of those times: until the API server received the edit's last write (EditWrites).
    for (String p : List.of("P50", "P99", "Max")) {
      metrics.add(new Metric("latency: edit to its last write received by the API server " + p.toLowerCase(Locale.ROOT)
          + " (ms)", r -> extra(r, "latency", "writesSent" + p + "Ms"), true));
    }
    // Metareactor's queue by lane (metareactor_queue_wait_seconds): bucket bounds, 1 ms to 5 min.
    for (String lane : List.of("fresh", "background")) {
      metrics.add(new Metric("latency: " + lane + " lane, keys taken", r -> extra(r, "latency", lane + "Waits"),
          false));
      for (String p : List.of("P50", "P99")) {
        metrics.add(new Metric("latency: " + lane + " lane, wait in the queue " + p.toLowerCase(Locale.ROOT)
            + " at most (ms)", r -> extra(r, "latency", lane + "Wait" + p + "Ms"), true));
      }
    }
    metrics.add(new Metric("latency: engine CPU (s)", r -> cpu(r, "latency"), false));
    metrics.add(new Metric("fan-out: shared ConfigMap edit to its parents converged, median (s)",
        r -> extra(r, "fanout", "fanOutMedianSeconds"), true));
    metrics.add(new Metric("fan-out: the same, slowest edit (s)", r -> extra(r, "fanout", "fanOutMaxSeconds"), true));
    metrics.add(new Metric("fan-out: parents per shared ConfigMap", r -> extra(r, "fanout", "parentsPerShared"),
        false));
    metrics.add(new Metric("fan-out: hook calls per edit", r -> field(r, "fanout", Results.Phase::hookCalls)
        / extra(r, "fanout", "sharedEdits"), false));
    metrics.add(new Metric("fan-out: engine CPU (s)", r -> cpu(r, "fanout"), false));
    metrics.add(new Metric("restart: ready after (s)", r -> extra(r, "restart", "readySeconds"), true));
    metrics.add(new Metric("restart: every parent synced after (s)", r -> seconds(r, "restart"), true));
    metrics.add(new Metric("restart: engine CPU (s)", r -> cpu(r, "restart"), false));
    metrics.add(new Metric("RSS after converge (MB)", r -> rssMb(r, "converge"), false));
    metrics.add(new Metric("RSS after update (MB)", r -> rssMb(r, "update"), false));
    metrics.add(new Metric("RSS after idle (MB)", r -> rssMb(r, "idle"), false));
    metrics.add(new Metric("RSS after restart (MB)", r -> rssMb(r, "restart"), false));
    metrics.add(new Metric("hook CPU, converge (s)", r -> hookCpu(r, "converge"), false));
    metrics.add(new Metric("hook CPU, update (s)", r -> hookCpu(r, "update"), false));
    metrics.add(new Metric("shadow: answers the same, until quiet after update", r -> extra(r, "update", "shadowSame"),
        false));
    metrics.add(new Metric("shadow: answers that differ, until quiet after update",
        r -> extra(r, "update", "shadowDiffers"), false));
    return metrics;
  }

  static void write(Results.Harness harness, Path dir) throws IOException {
    Files.writeString(dir.resolve("summary.md"), summary(harness));
    List<Chart<?, ?>> charts = new ArrayList<>();
    for (int size : harness.sizes()) {
      charts.add(progressChart(harness, size));
      charts.add(barChart(harness, size));
    }
    BitmapEncoder.saveBitmap(charts, harness.sizes().size(), 2, dir.resolve("chart.png").toString(),
        BitmapEncoder.BitmapFormat.PNG);
  }

  static String summary(Results.Harness harness) {
    StringBuilder md = new StringBuilder();
    List<String> engines = new ArrayList<>(harness.engines().keySet());
    md.append("Controller: ").append(harness.controller()).append(", ").append(harness.children())
        .append(" ConfigMap children per ").append(unit(harness))
        .append(resync(harness))
        .append(", flags `").append(String.join(" ", harness.flags()))
        .append("`, medians of ").append(harness.repetitions()).append(" alternating runs.\n\n");
    for (int size : harness.sizes()) {
      md.append("### ").append(size).append(' ').append(unit(harness)).append("s\n\n");
      harness.ceilings().stream().filter(c -> c.parents() == size).findFirst().ifPresent(c -> md.append(
          String.format(Locale.ROOT, "API server raw write ceiling (a plain Go client, %d parallel creates of %d"
              + " ConfigMaps): %.0f writes/s.%n%n", c.concurrency(), c.objects(), c.writesPerSecond())));
      md.append("| metric |");
      engines.forEach(e -> md.append(' ').append(e).append(" |"));
      engines.stream().skip(1).forEach(e -> md.append(' ').append(engines.get(0)).append(" / ").append(e).append(" |"));
      md.append("\n|---|");
      engines.forEach(e -> md.append("---:|"));
      engines.stream().skip(1).forEach(e -> md.append("---:|"));
      md.append('\n');
      for (Metric metric : metrics(harness)) {
        Map<String, OptionalDouble> medians = new LinkedHashMap<>();
        engines.forEach(e -> medians.put(e, median(harness, e, size, metric)));
        if (medians.values().stream().allMatch(OptionalDouble::isEmpty)) {
          continue;
        }
        md.append("| ").append(metric.name()).append(" |");
        medians.values().forEach(v -> md.append(' ').append(format(v)).append(" |"));
        OptionalDouble base = medians.get(engines.get(0));
        engines.stream().skip(1).forEach(e -> {
          OptionalDouble v = medians.get(e);
          md.append(' ').append(base.isPresent() && v.isPresent() && v.getAsDouble() != 0
              ? String.format(Locale.ROOT, "%.2fx", base.getAsDouble() / v.getAsDouble()) : "").append(" |");
        });
        md.append('\n');
      }
      md.append('\n');
      harness.ceilings().stream().filter(c -> c.parents() == size).findFirst().ifPresent(c -> {
        for (String e : engines) {
          OptionalDouble rate = median(harness, e, size, metrics(harness).get(1));
          rate.ifPresent(r -> md.append(String.format(Locale.ROOT, "- %s converged at %.0f writes/s, %.0f%% of the"
              + " ceiling.%n", e, r, 100 * r / c.writesPerSecond())));
        }
        md.append('\n');
      });
      replicas(harness, size, engines, md);
      md.append("The engines' API requests by verb and resource (first run of each engine, from the API server's"
          + " audit log):\n\n");
      for (String e : engines) {
        harness.runs().stream().filter(r -> r.engine().equals(e) && r.parents() == size).findFirst().ifPresent(r -> {
          for (Results.Phase phase : r.phases()) {
            md.append("- ").append(e).append(", ").append(phase.phase()).append(": ")
                .append(phase.requests().isEmpty() ? "none" : phase.requests().toString()).append('\n');
          }
        });
      }
      md.append('\n');
      harness.runs().stream().filter(r -> r.parents() == size && r.error() != null)
          .forEach(r -> md.append("- **").append(r.engine()).append(" run ").append(r.repetition())
              .append(" failed**: ").append(r.error()).append('\n'));
    }
    return md.toString();
  }

  private static XYChart progressChart(Results.Harness harness, int size) {
    XYChart chart = new XYChartBuilder().width(800).height(480)
        .title("Converge from scratch, " + size + " " + unit(harness) + "s x " + harness.children() + " children")
        .xAxisTitle("seconds since the engine process started").yAxisTitle("children converged").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideSE);
    for (Results.Run run : harness.runs()) {
      if (run.parents() != size || run.convergeProgress().size() < 2) {
        continue;
      }
      List<Double> x = run.convergeProgress().stream().map(ConvergenceWatch.Progress::seconds).toList();
      List<Integer> y = run.convergeProgress().stream().map(ConvergenceWatch.Progress::childrenConverged).toList();
      chart.addSeries(run.engine() + " #" + run.repetition(), x, y).setMarker(SeriesMarkers.NONE);
    }
    if (chart.getSeriesMap().isEmpty()) {
      chart.addSeries("no data", new double[] {0}, new double[] {0});
    }
    return chart;
  }

  private static CategoryChart barChart(Results.Harness harness, int size) {
    CategoryChart chart = new CategoryChartBuilder().width(800).height(480)
        .title("Medians, " + size + " " + unit(harness) + "s").yAxisTitle("seconds").build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    List<Metric> shown = metrics(harness).stream().filter(m -> m.name().equals("converge from scratch (s)")
        || m.name().equals("converge: engine CPU (s)") || m.name().equals("update wave (s)")
        || m.name().equals("update: engine CPU (s)")).toList();
    List<String> labels = shown.stream().map(m -> m.name().replace(" (s)", "")).toList();
    for (String engine : harness.engines().keySet()) {
      List<Double> values = shown.stream().map(m -> median(harness, engine, size, m).orElse(0)).toList();
      chart.addSeries(engine, labels, values);
    }
    return chart;
  }

  static OptionalDouble median(Results.Harness harness, String engine, int size, Metric metric) {
    double[] values = harness.runs().stream()
        .filter(r -> r.engine().equals(engine) && r.parents() == size && r.error() == null)
        .mapToDouble(metric.value()).filter(v -> !Double.isNaN(v)).sorted().toArray();
    if (values.length == 0) {
      return OptionalDouble.empty();
    }
    int mid = values.length / 2;
    return OptionalDouble.of(values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2);
  }

  private static String format(OptionalDouble value) {
    if (value.isEmpty()) {
      return "–";
    }
    double v = value.getAsDouble();
    return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.2f", v);
  }

  /** The controller's resync period and the shared ConfigMaps, where the run set them. */
  private static String resync(Results.Harness harness) {
    String text = "";
    if (harness.resyncSeconds() != null && harness.resyncSeconds() > 0) {
      text += ", resyncPeriodSeconds " + harness.resyncSeconds();
    }
    if (harness.related() != null && harness.related() > 0) {
      text += ", every parent related to one of " + harness.related() + " shared ConfigMaps (customize hook)";
    }
    return text;
  }

  /** What {@code --parents} counted: parents, or a MapController's inputs. */
  private static String unit(Results.Harness harness) {
    return ControllerKind.of(harness.controller()).unit();
  }

  // ---- reading runs (NaN where a phase did not run)

  private static double seconds(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.seconds();
  }

  private static double cpu(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.engineCpuSeconds();
  }

  private static double field(Results.Run run, String phase, ToDoubleFunction<Results.Phase> field) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : field.applyAsDouble(p);
  }

  /** How busy the machine's cores were during the phase, in percent of all of them. */
  private static double busy(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN
        : 100 * p.machineBusySeconds() / (p.seconds() * Runtime.getRuntime().availableProcessors());
  }

  private static double hookCpu(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.hookCpuSeconds();
  }

  /** The hook's calls (map calls, for a MapController) over the phase's seconds. */
  private static double hookCallsPerSecond(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.hookCalls() / p.seconds();
  }

  /** The hook's calls per parent, or per input: 1 when nothing was synced twice. */
  private static double hookCallsPerUnit(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : (double) p.hookCalls() / run.parents();
  }

  /** Successful writes of the parents' status subresource. */
  private static double statusWrites(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.requests().entrySet().stream()
        .filter(e -> e.getKey().matches("(patch|update) loadparents\\.bench\\.metareactor\\.dev/status"))
        .mapToLong(Map.Entry::getValue).sum();
  }

  private static double rssMb(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.engineRssBytes() / (1024.0 * 1024.0);
  }

  private static double requests(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    return p == null ? Double.NaN : p.requests().values().stream().mapToLong(Long::longValue).sum();
  }

  /** Writes to the bench objects: creates, updates and patches of ConfigMaps and parents. */
  private static double writes(Results.Run run, String phase) {
    Results.Phase p = run.phase(phase);
    if (p == null) {
      return Double.NaN;
    }
    Map<String, Long> byVerb = new TreeMap<>();
    p.requests().forEach((key, count) -> {
      String verb = key.substring(0, key.indexOf(' '));
      boolean bench = key.contains("configmaps") || key.contains("loadparents");
      if (bench && !key.endsWith(")") && (verb.equals("create") || verb.equals("update") || verb.equals("patch"))) {
        byVerb.merge(verb, count, Long::sum);
      }
    });
    return byVerb.values().stream().mapToLong(Long::longValue).sum();
  }

  /**
   * For an engine run as replicas (with {@code --sharding}): each replica's RSS, objects cached and CPU after the
   * converge (first run of each such engine).
   */
  private static void replicas(Results.Harness harness, int size, List<String> engines, StringBuilder md) {
    for (String e : engines) {
      harness.runs().stream().filter(r -> r.engine().equals(e) && r.parents() == size).findFirst().ifPresent(r -> {
        Results.Phase converge = r.phase("converge");
        if (converge == null || !converge.extra().containsKey("replica0RssMB")) {
          return;
        }
        md.append("Replicas of ").append(e).append(" after the converge (first run):\n\n")
            .append("| replica | parents | RSS (MB) | objects cached | CPU (s) |\n|---|---:|---:|---:|---:|\n");
        for (int i = 0; converge.extra().containsKey("replica" + i + "RssMB"); i++) {
          md.append(String.format(Locale.ROOT, "| %d | %.0f | %.0f | %.0f | %.2f |%n", i,
              converge.extra().getOrDefault("replica" + i + "Parents", Double.NaN),
              converge.extra().get("replica" + i + "RssMB"), converge.extra().get("replica" + i + "InformerObjects"),
              converge.extra().get("replica" + i + "CpuSeconds")));
        }
        md.append('\n');
      });
    }
  }

  private static double extra(Results.Run run, String phase, String key) {
    Results.Phase p = run.phase(phase);
    return p == null || !p.extra().containsKey(key) ? Double.NaN : p.extra().get(key);
  }

  private static double perMinute(Results.Run run, double value) {
    Results.Phase p = run.phase("idle");
    return p == null ? Double.NaN : value * 60 / p.seconds();
  }
}
