package dev.metareactor.engine.server;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.core.spi.ContextAwareBase;
import dev.metareactor.engine.config.LogSettings;

/**
 * Logback's first configuration, before the command line is parsed: human-readable lines at INFO on stderr, set up
 * in code. Found through {@code ServiceLoader}; it spares every start of the engine Logback's XML configurator
 * (parsing a {@code logback.xml} loads some hundred classes, a twentieth of the engine's start-up CPU), and
 * {@link LogConfiguration} replaces it once the {@code --zap-*} flags are known.
 *
 * <p>A {@code logback.xml} or {@code logback-test.xml} on the class path, or {@code -Dlogback.configurationFile},
 * still wins: then this configurator stands aside.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class EngineLogConfigurator extends ContextAwareBase implements Configurator {

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    ClassLoader loader = EngineLogConfigurator.class.getClassLoader();
    if (System.getProperty("logback.configurationFile") != null || loader.getResource("logback-test.xml") != null
        || loader.getResource("logback.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    LogConfiguration.configure(context, new LogSettings("INFO", false, LogSettings.TimeEncoding.RFC3339, "ERROR"));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
