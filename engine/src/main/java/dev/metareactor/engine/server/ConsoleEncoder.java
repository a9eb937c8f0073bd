package dev.metareactor.engine.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Human-readable lines ({@code --zap-devel}, {@code --zap-encoder=console}): the time, level, thread, logger and
 * message, the line's key-value pairs as {@code key=value}; below it a stack trace when the line is at or above
 * {@code --zap-stacktrace-level}, else its exception's class and message as {@code error="..."} ({@link
 * Stacktraces}).
 */
final class ConsoleEncoder extends LineEncoder {

  /** Logback's pattern without the line end and without an exception, which {@link #encode} adds as the level says. */
  private static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg"
      + "%replace( %kvp){'^ $', ''}%nopex";

  private final Level stacktraceLevel;
  private final PatternLayout layout = new PatternLayout();

  /** @param stacktraceLevel the level at and above which a line carries a stack trace ({@code OFF}: none) */
  ConsoleEncoder(Level stacktraceLevel) {
    this.stacktraceLevel = Objects.requireNonNull(stacktraceLevel, "stacktraceLevel");
  }

  @Override
  public void start() {
    layout.setContext(getContext());
    layout.setPattern(PATTERN);
    layout.start();
    super.start();
  }

  @Override
  public void stop() {
    layout.stop();
    super.stop();
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    StringBuilder line = new StringBuilder(layout.doLayout(event));
    String stacktrace = Stacktraces.of(event, stacktraceLevel);
    String error = Stacktraces.error(event);
    if (stacktrace == null && error != null) {
      line.append(" error=\"").append(error.replace("\n", "\\n")).append('"');
    }
    line.append('\n');
    if (stacktrace != null) {
      line.append(stacktrace).append('\n');
    }
    return line.toString().getBytes(StandardCharsets.UTF_8);
  }
}
