package dev.metareactor.engine.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import dev.metareactor.engine.config.LogSettings;
import java.time.ZoneId;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Configures Logback from the {@code --zap-*} flags: one appender on stderr (where zap writes), JSON lines shaped as
 * zap's ({@link ZapJsonEncoder}) or human-readable ones ({@link ConsoleEncoder}), each with stack traces at and above
 * {@code --zap-stacktrace-level}, the chosen level for the engine. Libraries log one level quieter than the engine
 * (informers, Netty and the Kubernetes client are chatty at debug), except at trace, where everything logs.
 */
public final class LogConfiguration {

  private static final List<String> LIBRARIES =
      List.of("io.netty", "reactor", "io.github.resilience4j", "io.micrometer");

  private LogConfiguration() {}

  /** Replaces whatever configuration Logback loaded; does nothing if SLF4J is not bound to Logback. */
  public static void apply(LogSettings settings) {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      configure(context, settings);
    }
  }

  /** Configures {@code context} from scratch. */
  static void configure(LoggerContext context, LogSettings settings) {
    context.reset();
    Level stacktraces = Level.toLevel(settings.stacktraceLevel(), Level.ERROR);
    Encoder<ILoggingEvent> encoder = settings.json()
        ? new ZapJsonEncoder(settings.time(), ZoneId.systemDefault(), stacktraces)
        : new ConsoleEncoder(stacktraces);
    encoder.setContext(context);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("stderr");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();

    Level level = Level.toLevel(settings.level(), Level.INFO);
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(level);
    root.addAppender(stderr);
    Level libraries = level.isGreaterOrEqual(Level.INFO) ? Level.WARN
        : level == Level.TRACE ? Level.TRACE : Level.INFO;
    LIBRARIES.forEach(name -> context.getLogger(name).setLevel(libraries));
  }
}
