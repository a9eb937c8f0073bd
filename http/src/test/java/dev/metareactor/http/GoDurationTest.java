package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {

  @Test
  void parsesGoDurations() {
    assertThat(GoDuration.parse("10s")).isEqualTo(Duration.ofSeconds(10));
    assertThat(GoDuration.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(GoDuration.parse("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(GoDuration.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(GoDuration.parse("2h45m")).isEqualTo(Duration.ofMinutes(165));
    assertThat(GoDuration.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(GoDuration.parse(".5m")).isEqualTo(Duration.ofSeconds(30));
    assertThat(GoDuration.parse("-1.5h")).isEqualTo(Duration.ofMinutes(-90));
    assertThat(GoDuration.parse("+5s")).isEqualTo(Duration.ofSeconds(5));
    assertThat(GoDuration.parse("300us")).isEqualTo(Duration.ofNanos(300_000));
    assertThat(GoDuration.parse("300µs")).isEqualTo(Duration.ofNanos(300_000));
    assertThat(GoDuration.parse("7ns")).isEqualTo(Duration.ofNanos(7));
    assertThat(GoDuration.parse("0")).isEqualTo(Duration.ZERO);
    assertThat(GoDuration.parse("-0")).isEqualTo(Duration.ZERO);
    assertThat(GoDuration.parse("0s")).isEqualTo(Duration.ZERO);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "10", "s", "1x", "1..5s", "-", "1h-5m", "ten seconds", "1.s5"})
  void rejectsInvalidText(String text) {
    assertThatThrownBy(() -> GoDuration.parse(text)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duration");
  }

  @Test
  void formatsLikeGo() {
    assertThat(GoDuration.format(Duration.ofMinutes(90))).isEqualTo("1h30m0s");
    assertThat(GoDuration.format(Duration.ofSeconds(30))).isEqualTo("30s");
    assertThat(GoDuration.format(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(GoDuration.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(GoDuration.format(Duration.ofMinutes(30))).isEqualTo("30m0s");
    assertThat(GoDuration.format(Duration.ZERO)).isEqualTo("0s");
    assertThat(GoDuration.format(Duration.ofSeconds(-5))).isEqualTo("-5s");
  }
}
