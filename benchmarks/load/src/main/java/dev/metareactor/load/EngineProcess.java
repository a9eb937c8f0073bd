package dev.metareactor.load;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One engine under test, run as its own process with Metacontroller's flags: the harness's common flags, the
 * kubeconfig, and free loopback ports for metrics and probes. Measured only from outside: {@code /proc} for CPU and
 * memory, its {@code /readyz} for readiness.
 */
final class EngineProcess implements AutoCloseable {

  /** An engine to measure: a name for the reports and the command that starts it (flags are appended). */
  record Engine(String name, List<String> command) {
    Engine {
      command = List.copyOf(command);
      if (name.isBlank() || command.isEmpty()) {
        throw new IllegalArgumentException("an engine needs a name and a command");
      }
    }

    /** {@code name=command with args}, split on whitespace. */
    static Engine parse(String spec) {
      int eq = spec.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected name=command, got " + spec);
      }
      return new Engine(spec.substring(0, eq).trim(), List.of(spec.substring(eq + 1).trim().split("\\s+")));
    }
  }

  private final Process process;
  private final ProcessTree tree;
  private final long startedNanos;
  private final int probePort;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofMillis(200)).build();

  private EngineProcess(Process process, long startedNanos, int probePort) {
    this.process = process;
    this.tree = new ProcessTree(process.pid());
    this.startedNanos = startedNanos;
    this.probePort = probePort;
  }

  static EngineProcess start(Engine engine, List<String> flags, Path kubeconfig, Path log) throws IOException {
    int metricsPort = freePort();
    int probePort = freePort();
    List<String> command = new ArrayList<>(engine.command());
    command.add("--kubeconfig=" + kubeconfig);
    command.add("--metrics-address=127.0.0.1:" + metricsPort);
    command.add("--health-probe-bind-address=127.0.0.1:" + probePort);
    command.addAll(flags);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    long started = System.nanoTime();
    return new EngineProcess(builder.start(), started, probePort);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  long startedNanos() {
    return startedNanos;
  }

  ProcessTree.Sample sample() {
    return tree.sample();
  }

  boolean alive() {
    return process.isAlive();
  }

  /** Time from process start until {@code /readyz} answered 200, polled every 20 ms; empty if it never did. */
  Optional<Duration> awaitReady(Duration timeout) throws InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + probePort + "/readyz"))
        .timeout(Duration.ofSeconds(1)).GET().build();
    long deadline = startedNanos + timeout.toNanos();
    while (System.nanoTime() < deadline && process.isAlive()) {
      try {
        if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return Optional.of(Duration.ofNanos(System.nanoTime() - startedNanos));
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(20);
    }
    return Optional.empty();
  }

  /** SIGTERM, then SIGKILL after {@code grace}; every descendant too. */
  void stop(Duration grace) throws InterruptedException {
    List<ProcessHandle> descendants = process.descendants().toList();
    process.destroy();
    if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor();
    }
    descendants.forEach(ProcessHandle::destroyForcibly);
  }

  @Override
  public void close() {
    try {
      stop(Duration.ofSeconds(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
