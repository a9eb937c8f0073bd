package dev.metareactor.engine.config;

import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Logging, from zap's flags as Metacontroller accepts them: {@code --zap-log-level} ({@code debug}, {@code info},
 * {@code error}, or a verbosity from 1 up: 1 to 4 log at debug, 5 and more at trace), {@code --zap-devel}
 * (human-readable console output instead of JSON lines), {@code --zap-encoder} ({@code json} or
 * {@code console}, overriding the {@code --zap-devel} default), {@code --zap-time-encoding} (how JSON lines write
 * the time), {@code --zap-stacktrace-level} (the level at and above which a line carries a stack trace: {@code info},
 * {@code error} or {@code panic}, as upstream accepts them, and zap's other level names; by default {@code error},
 * {@code warn} with {@code --zap-devel}, as controller-runtime's defaults).
 *
 * @param level an SLF4J level name: TRACE, DEBUG, INFO, WARN or ERROR
 * @param json whether to write JSON lines
 * @param time how JSON lines write the time
 * @param stacktraceLevel an SLF4J level name (DEBUG, INFO, WARN or ERROR), or OFF: a line at or above it carries a
 *     stack trace (its exception's, else where it was logged); OFF for none (zap's {@code panic}: the engine never
 *     logs at a level that high)
 */
public record LogSettings(String level, boolean json, TimeEncoding time, String stacktraceLevel) {

  /** zap's time encodings, by their {@code --zap-time-encoding} names. */
  public enum TimeEncoding {
    /** Seconds since the epoch, with a fraction. */
    EPOCH,
    /** Milliseconds since the epoch, with a fraction. */
    MILLIS,
    /** Nanoseconds since the epoch. */
    NANO,
    /** {@code 2026-11-23T17:25:24.123+0000}. */
    ISO8601,
    /** {@code 2026-11-23T17:25:24Z}: controller-runtime's default, so Metacontroller's. */
    RFC3339,
    /** {@code 2026-11-23T17:25:24.123456789Z}. */
    RFC3339_NANO;

    /** Parses a {@code --zap-time-encoding} value; empty means {@link #RFC3339}. */
    public static TimeEncoding parse(@Nullable String value) {
      if (value == null || value.isBlank()) {
        return RFC3339;
      }
      return switch (value.strip().toLowerCase(Locale.ROOT)) {
        case "epoch" -> EPOCH;
        case "millis" -> MILLIS;
        case "nano" -> NANO;
        case "iso8601" -> ISO8601;
        case "rfc3339" -> RFC3339;
        case "rfc3339nano" -> RFC3339_NANO;
        default -> throw new IllegalArgumentException("invalid --zap-time-encoding '" + value
            + "': expected epoch, millis, nano, iso8601, rfc3339 or rfc3339nano");
      };
    }
  }

  public LogSettings {
    Objects.requireNonNull(level, "level");
    Objects.requireNonNull(time, "time");
    Objects.requireNonNull(stacktraceLevel, "stacktraceLevel");
  }

  /**
   * Interprets the zap flags; {@code encoder}, {@code timeEncoding} and {@code stacktraceLevel} may be null or empty
   * (then {@code devel}, and RFC 3339, decide).
   */
  public static LogSettings fromZapFlags(@Nullable String zapLevel, boolean devel, @Nullable String encoder,
      @Nullable String timeEncoding, @Nullable String stacktraceLevel) {
    boolean json;
    if (encoder == null || encoder.isBlank()) {
      json = !devel;
    } else {
      json = switch (encoder.strip().toLowerCase(Locale.ROOT)) {
        case "json" -> true;
        case "console" -> false;
        default -> throw new IllegalArgumentException("invalid --zap-encoder '" + encoder
            + "': expected json or console");
      };
    }
    return new LogSettings(level(zapLevel, devel), json, TimeEncoding.parse(timeEncoding),
        stacktraceLevel(stacktraceLevel, devel));
  }

  /**
   * {@code --zap-stacktrace-level}: zap's level names; {@code dpanic} and above, which the engine never logs at, mean
   * none.
   */
  private static String stacktraceLevel(@Nullable String zapLevel, boolean devel) {
    if (zapLevel == null || zapLevel.isBlank()) {
      return devel ? "WARN" : "ERROR";
    }
    return switch (zapLevel.strip().toLowerCase(Locale.ROOT)) {
      case "debug" -> "DEBUG";
      case "info" -> "INFO";
      case "warn" -> "WARN";
      case "error" -> "ERROR";
      case "dpanic", "panic", "fatal" -> "OFF";
      default -> throw new IllegalArgumentException("invalid --zap-stacktrace-level '" + zapLevel
          + "': expected info, error or panic");
    };
  }

  private static String level(@Nullable String zapLevel, boolean devel) {
    if (zapLevel == null || zapLevel.isBlank()) {
      return devel ? "DEBUG" : "INFO";
    }
    String value = zapLevel.strip().toLowerCase(Locale.ROOT);
    switch (value) {
      case "debug":
        return "DEBUG";
      case "info":
        return "INFO";
      case "warn":
        return "WARN";
      case "error":
      case "dpanic":
      case "panic":
      case "fatal":
        return "ERROR";
      default:
        break;
    }
    int verbosity;
    try {
      verbosity = Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("invalid --zap-log-level '" + zapLevel
          + "': expected debug, info, error or an integer > 0");
    }
    if (verbosity <= 0) {
      throw new IllegalArgumentException("invalid --zap-log-level '" + zapLevel + "': an integer level must be > 0");
    }
    return verbosity >= 5 ? "TRACE" : "DEBUG";
  }
}
