package dev.metareactor.benchmarks;

/** JVM arguments of the benchmarks' forks. */
final class Forks {

  /**
   * SLF4J's no-op provider. The shaded jar carries Logback without a configuration, which logs at DEBUG to the
   * console (every hook request, every child written): a benchmark would measure the console.
   */
  static final String NO_LOGGING = "-Dslf4j.provider=org.slf4j.helpers.NOP_FallbackServiceProvider";

  private Forks() {}
}
