package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
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

  @Test
  void saysWhetherTheHookGaveADelay() {
    assertThat(HookRetryAfterException.fromHeader("7", NOW).detail())
        .isEqualTo("too many requests, retry after 7 seconds");
    assertThat(HookRetryAfterException.fromHeader("7", NOW).hasDelay()).isTrue();
    for (String header : new String[] {null, "0", "soon" + (char) 7 + "!"}) {
      assertThat(HookRetryAfterException.fromHeader(header, NOW).hasDelay()).as(header).isFalse();
    }
    assertThat(HookRetryAfterException.fromHeader(null, NOW).detail())
        .isEqualTo("too many requests, without Retry-After: retrying with backoff");
    assertThat(HookRetryAfterException.fromHeader("0", NOW).detail())
        .isEqualTo("too many requests, Retry-After \"0\" is no delay: retrying with backoff");
    assertThat(HookRetryAfterException.fromHeader("soon" + (char) 7 + "!", NOW).detail())
        .as("only printable characters of what the hook sent")
        .isEqualTo("too many requests, Retry-After \"soon?!\" is no delay: retrying with backoff");
  }

  @Test
  void showsAtMostTheStartOfAnUnusableHeader() {
    assertThat(HookRetryAfterException.fromHeader("x".repeat(500), NOW).detail())
        .isEqualTo("too many requests, Retry-After \"" + "x".repeat(40) + "...\" is no delay: retrying with backoff");
  }
}
