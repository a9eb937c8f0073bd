package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RetryAfterTest {

  /** Half a second past the minute, so dates on whole seconds need rounding up. */
  private static final Clock NOW = Clock.fixed(Instant.parse("2026-11-22T10:00:00.500Z"), ZoneOffset.UTC);

  @ParameterizedTest
  @CsvSource(nullValues = "null", value = {
      "7,7",
      "' 12 ',12",
      "0,0",
      "-3,0",
      "soon,0",
      "'',0",
      "null,0",
      "'Sun, 22 Nov 2026 10:01:00 GMT',60",
      "'Sun, 22 Nov 2026 10:00:01 GMT',1",
      "'Sun, 22 Nov 2026 09:59:00 GMT',0"})
  void readsSecondsOrAnHttpDate(String header, long seconds) {
    assertThat(HookRetryAfterException.parse(header, NOW)).isEqualTo(Duration.ofSeconds(seconds));
  }
}
