package dev.metareactor.benchmarks;

/** JVM arguments of the benchmarks' forks. */
final class Forks {

  /**
   * SLF4J's no-op provider: no logging, nor its level checks, in what a benchmark measures. (Without it the shaded
   * jar's Logback is configured by the engine's {@code EngineLogConfigurator}, at INFO on stderr; before that
   * configurator existed it logged every hook request and child write at DEBUG to the console.)
   */
  static final String NO_LOGGING = "-Dslf4j.provider=org.slf4j.helpers.NOP_FallbackServiceProvider";

  private Forks() {}
}
