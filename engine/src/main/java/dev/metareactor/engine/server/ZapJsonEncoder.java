package dev.metareactor.engine.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.metareactor.engine.config.LogSettings.TimeEncoding;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.event.KeyValuePair;
import tools.jackson.core.io.JsonStringEncoder;

/**
 * JSON lines shaped as Metacontroller's (zap through controller-runtime) are, so that what people and scripts read
 * in upstream's logs reads the same here: {@code {"level":"info","ts":"2026-11-23T17:25:24Z","msg":"Successfully
 * acquired lease","lock":"default/metacontroller"}} — level in zap's lower-case names, the time as
 * {@code --zap-time-encoding} says (RFC 3339 to the second by default, in the process's time zone, as Go's local
 * time), {@code logger} (the simple name of the class that logs), the formatted message as {@code msg}, the event's
 * key-value pairs as top-level members in the order they were added, then for an exception {@code error} (its class
 * and message), and {@code stacktrace} on a line at or above {@code --zap-stacktrace-level} ({@link Stacktraces}).
 * The leader-election lines reproduce client-go's as Metacontroller prints them, character for character, and so
 * carry no {@code logger}, as upstream's do not.
 *
 * <p>Never throws: a log line that cannot be written as intended is still written.
 */
final class ZapJsonEncoder extends LineEncoder {

  /** The logger whose lines are upstream's (client-go's leader election), written without {@code logger}. */
  private static final String UPSTREAM_VERBATIM = LeaderElection.class.getName();
  private static final DateTimeFormatter RFC3339 = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssXXX");
  private static final DateTimeFormatter RFC3339_NANO = DateTimeFormatter.ISO_OFFSET_DATE_TIME;
  private static final DateTimeFormatter ISO8601 = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSxx");

  private final TimeEncoding time;
  private final ZoneId zone;
  private final Level stacktraceLevel;

  /** Stack traces on lines at or above {@code ERROR}, the default. */
  ZapJsonEncoder(TimeEncoding time, ZoneId zone) {
    this(time, zone, Level.ERROR);
  }

  /** @param stacktraceLevel the level at and above which a line carries a stack trace ({@code OFF}: none) */
  ZapJsonEncoder(TimeEncoding time, ZoneId zone, Level stacktraceLevel) {
    this.time = Objects.requireNonNull(time, "time");
    this.zone = Objects.requireNonNull(zone, "zone");
    this.stacktraceLevel = Objects.requireNonNull(stacktraceLevel, "stacktraceLevel");
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    StringBuilder line = new StringBuilder(160);
    line.append("{\"level\":\"").append(level(event.getLevel())).append("\",\"ts\":");
    timestamp(line, event.getInstant());
    String logger = event.getLoggerName();
    if (logger != null && !logger.equals(UPSTREAM_VERBATIM)) {
      line.append(",\"logger\":");
      string(line, logger.substring(logger.lastIndexOf('.') + 1));
    }
    line.append(",\"msg\":");
    string(line, event.getFormattedMessage());
    List<KeyValuePair> pairs = event.getKeyValuePairs();
    if (pairs != null) {
      for (KeyValuePair pair : pairs) {
        line.append(',');
        string(line, pair.key);
        line.append(':');
        value(line, pair.value);
      }
    }
    String error = Stacktraces.error(event);
    if (error != null) {
      line.append(",\"error\":");
      string(line, error);
    }
    String stacktrace = Stacktraces.of(event, stacktraceLevel);
    if (stacktrace != null) {
      line.append(",\"stacktrace\":");
      string(line, stacktrace);
    }
    line.append("}\n");
    return line.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** zap's level names; zap has no trace, which Metacontroller's verbosities above 4 log at debug too. */
  private static String level(Level level) {
    return switch (level.toInt()) {
      case Level.ERROR_INT -> "error";
      case Level.WARN_INT -> "warn";
      case Level.INFO_INT -> "info";
      default -> "debug";
    };
  }

  private void timestamp(StringBuilder line, Instant instant) {
    switch (time) {
      case RFC3339 -> string(line, RFC3339.format(instant.atZone(zone)));
      case RFC3339_NANO -> string(line, RFC3339_NANO.format(instant.atZone(zone)));
      case ISO8601 -> string(line, ISO8601.format(instant.atZone(zone)));
      case EPOCH -> line.append(instant.getEpochSecond() + instant.getNano() / 1e9);
      case MILLIS -> line.append(instant.toEpochMilli() + (instant.getNano() % 1_000_000) / 1e6);
      case NANO -> line.append(instant.getEpochSecond() * 1_000_000_000L + instant.getNano());
    }
  }

  private static void value(StringBuilder line, @Nullable Object value) {
    if (value == null) {
      line.append("null");
    } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long
        || value instanceof Short || value instanceof Byte) {
      line.append(value);
    } else if (value instanceof Double || value instanceof Float) {
      double number = ((Number) value).doubleValue();
      if (Double.isFinite(number)) {
        line.append(value);
      } else {
        string(line, value.toString());
      }
    } else {
      string(line, String.valueOf(value));
    }
  }

  private static void string(StringBuilder line, @Nullable String text) {
    line.append('"');
    JsonStringEncoder.getInstance().quoteAsString(text == null ? "" : text, line);
    line.append('"');
  }
}
