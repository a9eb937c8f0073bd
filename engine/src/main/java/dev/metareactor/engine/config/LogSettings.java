package dev.metareactor.engine.config;

import java.util.Locale;
import java.util.Objects;

/**
 * Logging, from zap's flags as Metacontroller accepts them: {@code --zap-log-level} ({@code debug}, {@code info},
 * {@code error}, or a verbosity from 1 up: 1 to 4 log at debug, 5 and more at trace), {@code --zap-devel}
 * (human-readable console output instead of JSON lines), {@code --zap-encoder} ({@code json} or
 * {@code console}, overriding the {@code --zap-devel} default).
 *
 * @param level an SLF4J level name: TRACE, DEBUG, INFO, WARN or ERROR
 * @param json whether to write JSON lines
 */
public record LogSettings(String level, boolean json) {

  public LogSettings {
    Objects.requireNonNull(level, "level");
  }

  /** Interprets the zap flags; {@code encoder} may be null or empty (then {@code devel} decides). */
  public static LogSettings fromZapFlags(String zapLevel, boolean devel, String encoder) {
    boolean json;
    if (encoder == null || encoder.isBlank()) {
      json = !devel;
    } else {
      json = switch (encoder.strip().toLowerCase(Locale.ROOT)) {
        case "json" -> true;
        case "console" -> false;
        default -> throw new IllegalArgumentException("invalid --zap-encoder '" + encoder + "': expected json or console");
      };
    }
    return new LogSettings(level(zapLevel, devel), json);
  }

  private static String level(String zapLevel, boolean devel) {
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
