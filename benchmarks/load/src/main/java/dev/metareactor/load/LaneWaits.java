package dev.metareactor.load;

import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long keys waited in Metareactor's work queue during a phase, by lane, from the engine's
 * {@code metareactor_queue_wait_seconds} histogram: the fresh lane's wait is how long a change waited behind other
 * work, the background lane's how late resyncs, retries and echoes ran while changes went first (issue 32). A
 * snapshot is the histogram's cumulative bucket counts; a phase's quantiles come from the difference of two, as the
 * upper bound of the bucket the quantile falls in (1 ms to 5 minutes). Engines without the metric (upstream) give
 * none.
 */
final class LaneWaits {

  static final String METRIC = "metareactor_queue_wait_seconds_bucket";
  private static final Pattern LANE = Pattern.compile("lane=\"([a-z]+)\"");
  private static final Pattern LE = Pattern.compile("le=\"([^\"]+)\"");

  /** Per lane, per bucket bound in seconds ({@code +Inf} last), the cumulative count. */
  private final Map<String, TreeMap<Double, Double>> buckets;

  private LaneWaits(Map<String, TreeMap<Double, Double>> buckets) {
    this.buckets = buckets;
  }

  /** The engine's histogram now (every controller's queue summed). */
  static LaneWaits of(EngineProcess engine) {
    return parse(engine.series(METRIC));
  }

  /** Series as {@link EngineProcess#series} gives them: labels as written, values. */
  static LaneWaits parse(Map<String, Double> series) {
    Map<String, TreeMap<Double, Double>> buckets = new TreeMap<>();
    series.forEach((labels, value) -> {
      Matcher lane = LANE.matcher(labels);
      Matcher le = LE.matcher(labels);
      if (lane.find() && le.find()) {
        double bound = le.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le.group(1));
        buckets.computeIfAbsent(lane.group(1), l -> new TreeMap<>()).merge(bound, value, Double::sum);
      }
    });
    return new LaneWaits(buckets);
  }

  /** How many keys of {@code lane} were taken since {@code before}. */
  double count(String lane, LaneWaits before) {
    TreeMap<Double, Double> now = buckets.get(lane);
    return now == null ? Double.NaN : now.lastEntry().getValue() - before.cumulative(lane, now.lastKey());
  }

  /**
   * The {@code fraction} quantile of the waits of {@code lane} since {@code before}, in milliseconds: the upper
   * bound of the bucket it falls in ({@link Double#POSITIVE_INFINITY} past the last); {@link Double#NaN} without the
   * metric or without a key taken.
   */
  double quantileMillis(String lane, LaneWaits before, double fraction) {
    TreeMap<Double, Double> now = buckets.get(lane);
    double total = count(lane, before);
    if (now == null || !(total > 0)) {
      return Double.NaN;
    }
    for (Map.Entry<Double, Double> bucket : now.entrySet()) {
      if (bucket.getValue() - before.cumulative(lane, bucket.getKey()) >= fraction * total) {
        return bucket.getKey() * 1000;
      }
    }
    return Double.POSITIVE_INFINITY;
  }

  private double cumulative(String lane, double bound) {
    TreeMap<Double, Double> counts = buckets.get(lane);
    Double count = counts == null ? null : counts.get(bound);
    return count == null ? 0 : count;
  }
}
