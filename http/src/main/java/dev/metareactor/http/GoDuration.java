package dev.metareactor.http;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Objects;

/**
 * Go's duration syntax ({@code time.ParseDuration}), used by Metacontroller's flags ({@code --discovery-interval=20s})
 * and hook timeouts ({@code timeout: 1m30s}): an optional sign, then one or more decimal numbers each followed by a
 * unit: {@code ns}, {@code us} (or {@code µs}, {@code μs}), {@code ms}, {@code s}, {@code m}, {@code h}. For example
 * {@code 300ms}, {@code -1.5h}, {@code 2h45m}. A bare {@code 0} is zero; any other number needs a unit.
 */
public final class GoDuration {

  private GoDuration() {}

  /**
   * Parses a Go duration.
   *
   * @throws IllegalArgumentException naming the text when it is not a Go duration
   */
  public static Duration parse(String text) {
    Objects.requireNonNull(text, "text");
    String s = text.strip();
    int i = 0;
    boolean negative = false;
    if (s.startsWith("-") || s.startsWith("+")) {
      negative = s.charAt(0) == '-';
      i = 1;
    }
    if (s.substring(i).equals("0")) {
      return Duration.ZERO;
    }
    if (i == s.length()) {
      throw invalid(text);
    }
    BigDecimal nanos = BigDecimal.ZERO;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      String number = s.substring(start, i);
      if (number.isEmpty() || number.equals(".") || number.indexOf('.') != number.lastIndexOf('.')) {
        throw invalid(text);
      }
      int unitStart = i;
      while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
        i++;
      }
      long unitNanos = unitNanos(s.substring(unitStart, i), text);
      BigDecimal value = new BigDecimal(number.startsWith(".") ? "0" + number : number);
      nanos = nanos.add(value.multiply(BigDecimal.valueOf(unitNanos)));
    }
    BigDecimal whole = nanos.setScale(0, RoundingMode.DOWN);
    if (whole.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("duration out of range: " + text);
    }
    long total = whole.longValueExact();
    return Duration.ofNanos(negative ? -total : total);
  }

  /** Formats a duration the way Go prints one: {@code 1h30m0s}, {@code 250ms}, {@code 0s}. */
  public static String format(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.isZero()) {
      return "0s";
    }
    StringBuilder out = new StringBuilder();
    Duration d = duration;
    if (d.isNegative()) {
      out.append('-');
      d = d.negated();
    }
    if (d.compareTo(Duration.ofSeconds(1)) < 0) {
      long nanos = d.toNanos();
      if (nanos % 1_000_000 == 0) {
        return out.append(nanos / 1_000_000).append("ms").toString();
      }
      if (nanos % 1_000 == 0) {
        return out.append(nanos / 1_000).append("µs").toString();
      }
      return out.append(nanos).append("ns").toString();
    }
    long hours = d.toHours();
    long minutes = d.toMinutesPart();
    if (hours > 0) {
      out.append(hours).append('h');
    }
    if (hours > 0 || minutes > 0) {
      out.append(minutes).append('m');
    }
    BigDecimal seconds = BigDecimal.valueOf(d.toSecondsPart()).add(BigDecimal.valueOf(d.toNanosPart(), 9));
    return out.append(seconds.stripTrailingZeros().toPlainString()).append('s').toString();
  }

  private static long unitNanos(String unit, String text) {
    return switch (unit) {
      case "ns" -> 1L;
      case "us", "µs", "μs" -> 1_000L;
      case "ms" -> 1_000_000L;
      case "s" -> 1_000_000_000L;
      case "m" -> 60_000_000_000L;
      case "h" -> 3_600_000_000_000L;
      case "" -> throw new IllegalArgumentException("missing unit in duration '" + text + "'");
      default -> throw new IllegalArgumentException("unknown unit '" + unit + "' in duration '" + text + "'");
    };
  }

  private static IllegalArgumentException invalid(String text) {
    return new IllegalArgumentException("invalid duration '" + text + "'");
  }
}
