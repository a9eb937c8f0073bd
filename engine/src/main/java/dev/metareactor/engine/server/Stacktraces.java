package dev.metareactor.engine.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxy;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * What {@code --zap-stacktrace-level} puts on a log line, as zap does: a line at or above the level carries a stack
 * trace — its exception's, as Java prints it, or where it was logged when it has none (zap's stack traces are always
 * the caller's: Go errors carry none); a line below it carries only its exception's class and message.
 */
final class Stacktraces {

  private Stacktraces() {}

  /** The exception's class and message, {@code null} when the line has none. */
  static @Nullable String error(ILoggingEvent event) {
    IThrowableProxy thrown = event.getThrowableProxy();
    if (thrown == null) {
      return null;
    }
    return thrown instanceof ThrowableProxy proxy ? proxy.getThrowable().toString()
        : thrown.getClassName() + ": " + thrown.getMessage();
  }

  /** The line's stack trace, {@code null} when it is below {@code threshold} or nothing says where it comes from. */
  static @Nullable String of(ILoggingEvent event, Level threshold) {
    if (!event.getLevel().isGreaterOrEqual(threshold)) {
      return null;
    }
    IThrowableProxy thrown = event.getThrowableProxy();
    if (thrown instanceof ThrowableProxy proxy) {
      StringWriter trace = new StringWriter();
      proxy.getThrowable().printStackTrace(new PrintWriter(trace));
      return trace.toString().stripTrailing();
    }
    if (thrown != null) {
      return null; // an exception that was serialized: its class and message are all there is
    }
    StackTraceElement[] caller = event.getCallerData();
    return caller == null || caller.length == 0 ? null
        : Arrays.stream(caller).map(frame -> "at " + frame).collect(Collectors.joining("\n\t"));
  }
}
