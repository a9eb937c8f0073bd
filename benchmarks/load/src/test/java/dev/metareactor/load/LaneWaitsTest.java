package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A phase's waits by lane, from two snapshots of the engine's cumulative histogram. */
class LaneWaitsTest {

  private static Map<String, Double> histogram(String lane, double... cumulative) {
    String[] bounds = {"0.001", "0.01", "0.1", "1.0", "+Inf"};
    Map<String, Double> series = new LinkedHashMap<>();
    for (int i = 0; i < bounds.length; i++) {
      series.put("{controller=\"c\",lane=\"" + lane + "\",le=\"" + bounds[i] + "\",name=\"q\"}", cumulative[i]);
    }
    return series;
  }

  @Test
  void quantilesAreTheUpperBoundsOfTheBucketsOfThePhasesOwnWaits() {
    Map<String, Double> before = new LinkedHashMap<>(histogram("fresh", 5, 5, 5, 5, 5));
    before.putAll(histogram("background", 0, 0, 0, 0, 0));
    // During the phase: 100 fresh keys, 98 within 1 ms, 2 within 100 ms; 10 background keys, 9 within 1 s, 1 above.
    Map<String, Double> after = new LinkedHashMap<>(histogram("fresh", 103, 103, 105, 105, 105));
    after.putAll(histogram("background", 0, 0, 0, 9, 10));

    LaneWaits start = LaneWaits.parse(before);
    LaneWaits end = LaneWaits.parse(after);
    assertThat(end.count("fresh", start)).isEqualTo(100);
    assertThat(end.quantileMillis("fresh", start, 0.5)).isEqualTo(1);
    assertThat(end.quantileMillis("fresh", start, 0.99)).isEqualTo(100);
    assertThat(end.count("background", start)).isEqualTo(10);
    assertThat(end.quantileMillis("background", start, 0.5)).isEqualTo(1000);
    assertThat(end.quantileMillis("background", start, 0.99)).isEqualTo(Double.POSITIVE_INFINITY);
  }

  @Test
  void anEngineWithoutTheMetricHasNone() {
    LaneWaits none = LaneWaits.parse(Map.of());
    assertThat(none.count("fresh", none)).isNaN();
    assertThat(none.quantileMillis("background", none, 0.99)).isNaN();
  }
}
