package dev.metareactor.load;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One engine under test, run as its own process with Metacontroller's flags: the harness's common flags, the
 * kubeconfig, and free loopback ports for metrics and probes; or (Metareactor's {@code --sharding}) as several such
 * processes, its replicas. Measured only from outside: {@code /proc} for CPU and memory, its {@code /readyz} for
 * readiness, and (per replica) its {@code /metrics}.
 */
final class EngineProcess implements AutoCloseable {

  /**
   * An engine to measure: a name for the reports, the command that starts it (flags are appended) and how the bench
   * controller's sync hook answers it.
   */
  record Engine(String name, List<String> command, HookKind syncHook) {
    Engine {
      command = List.copyOf(command);
      Objects.requireNonNull(syncHook, "syncHook");
      if (name.isBlank() || command.isEmpty()) {
        throw new IllegalArgumentException("an engine needs a name and a command");
      }
    }

    /** {@code name=command with args}, split on whitespace; its sync hook the Go webhook. */
    static Engine parse(String spec) {
      int eq = spec.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("expected name=command, got " + spec);
      }
      return new Engine(spec.substring(0, eq).trim(), List.of(spec.substring(eq + 1).trim().split("\\s+")),
          HookKind.WEBHOOK);
    }
  }

  /** One process of the engine: a replica with {@code --sharding}, the whole engine without. */
  private record Replica(Process process, ProcessTree tree, int metricsPort, int probePort) {}

  private final List<Replica> replicas;
  private final long startedNanos;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofMillis(200)).build();

  private EngineProcess(List<Replica> replicas, long startedNanos) {
    this.replicas = List.copyOf(replicas);
    this.startedNanos = startedNanos;
  }

  static EngineProcess start(Engine engine, List<String> flags, Path kubeconfig, Path log) throws IOException {
    return start(engine, flags, kubeconfig, log, Sharding.NONE);
  }

  /**
   * How the engine is run: as one process, or as {@code replicas} processes with {@code --sharding}, each its own
   * shard ({@code replica-<i>}) of one installation (the Leases in {@code namespace}, named after
   * {@code installation}).
   */
  record Sharding(int replicas, String namespace, String installation) {
    static final Sharding NONE = new Sharding(1, "", "");
  }

  /** Starts the engine's process, or its replicas (logs {@code <log>} with {@code -<i>} before the extension). */
  static EngineProcess start(Engine engine, List<String> flags, Path kubeconfig, Path log, Sharding sharding)
      throws IOException {
    long started = System.nanoTime();
    List<Replica> replicas = new ArrayList<>();
    for (int i = 0; i < sharding.replicas(); i++) {
      int metricsPort = freePort();
      int probePort = freePort();
      List<String> command = new ArrayList<>(engine.command());
      command.add("--kubeconfig=" + kubeconfig);
      command.add("--metrics-address=127.0.0.1:" + metricsPort);
      command.add("--health-probe-bind-address=127.0.0.1:" + probePort);
      command.addAll(flags);
      Path replicaLog = log;
      if (sharding.replicas() > 1) {
        command.addAll(List.of("--sharding", "--shard-name=replica-" + i,
            "--leader-election-namespace=" + sharding.namespace(),
            "--leader-election-id=" + sharding.installation()));
        String file = log.getFileName().toString();
        int dot = file.lastIndexOf('.');
        replicaLog = log.resolveSibling(dot < 0 ? file + "-" + i : file.substring(0, dot) + "-" + i
            + file.substring(dot));
      }
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(replicaLog.toFile())
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      Process process = builder.start();
      replicas.add(new Replica(process, new ProcessTree(process.pid()), metricsPort, probePort));
    }
    return new EngineProcess(replicas, started);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  long startedNanos() {
    return startedNanos;
  }

  /** CPU and memory of every replica together. */
  ProcessTree.Sample sample() {
    double cpu = 0;
    long rss = 0;
    for (Replica replica : replicas) {
      ProcessTree.Sample sample = replica.tree().sample();
      cpu += sample.cpuSeconds();
      rss += sample.rssBytes();
    }
    return new ProcessTree.Sample(cpu, rss);
  }

  /** How many processes the engine runs as. */
  int replicaCount() {
    return replicas.size();
  }

  /** CPU and memory of replica {@code i}. */
  ProcessTree.Sample sample(int i) {
    return replicas.get(i).tree().sample();
  }

  /**
   * The sum of every series of metric {@code name} on replica {@code i}'s {@code /metrics} (Prometheus text), or
   * {@link Double#NaN} when it cannot be read.
   */
  double metric(int i, String name) {
    return metric(i, name, "");
  }

  /** The sum over every replica of the series of metric {@code name} whose labels contain {@code label}. */
  double metric(String name, String label) {
    double sum = 0;
    for (int i = 0; i < replicas.size(); i++) {
      sum += metric(i, name, label);
    }
    return sum;
  }

  /**
   * The sum of the series of metric {@code name} on replica {@code i}'s {@code /metrics} whose labels contain
   * {@code label} ({@code result="same"}; {@code ""} for all), or {@link Double#NaN} when it cannot be read.
   */
  private double metric(int i, String name, String label) {
    Map<String, Double> series = series(i, name);
    if (series == null) {
      return Double.NaN;
    }
    return series.entrySet().stream().filter(entry -> label.isEmpty() || entry.getKey().contains(label))
        .mapToDouble(Map.Entry::getValue).sum();
  }

  /**
   * Every series of metric {@code name}, by its labels as written ({@code {lane="fresh",le="0.1"}}; {@code ""}
   * without labels), summed over the replicas; empty when no replica could be read.
   */
  Map<String, Double> series(String name) {
    Map<String, Double> sums = new LinkedHashMap<>();
    for (int i = 0; i < replicas.size(); i++) {
      Map<String, Double> one = series(i, name);
      if (one != null) {
        one.forEach((labels, value) -> sums.merge(labels, value, Double::sum));
      }
    }
    return sums;
  }

  /** The series of metric {@code name} on replica {@code i}, or {@code null} when it cannot be read. */
  private Map<String, Double> series(int i, String name) {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + replicas.get(i).metricsPort()
        + "/metrics")).timeout(Duration.ofSeconds(5)).GET().build();
    try {
      Map<String, Double> series = new LinkedHashMap<>();
      for (String line : http.send(request, HttpResponse.BodyHandlers.ofString()).body().lines().toList()) {
        if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
          String labels = line.startsWith(name + "{") ? line.substring(name.length(), line.indexOf('}') + 1) : "";
          series.merge(labels, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Double::sum);
        }
      }
      return series;
    } catch (IOException | NumberFormatException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  boolean alive() {
    return replicas.stream().allMatch(replica -> replica.process().isAlive());
  }

  /**
   * Time from process start until {@code /readyz} answered 200 (on every replica), polled every 20 ms; empty if it
   * never did.
   */
  Optional<Duration> awaitReady(Duration timeout) throws InterruptedException {
    long deadline = startedNanos + timeout.toNanos();
    for (Replica replica : replicas) {
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + replica.probePort()
          + "/readyz")).timeout(Duration.ofSeconds(1)).GET().build();
      boolean ready = false;
      while (!ready && System.nanoTime() < deadline && replica.process().isAlive()) {
        try {
          ready = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
          // not listening yet
        }
        if (!ready) {
          Thread.sleep(20);
        }
      }
      if (!ready) {
        return Optional.empty();
      }
    }
    return Optional.of(Duration.ofNanos(System.nanoTime() - startedNanos));
  }

  /** SIGTERM, then SIGKILL after {@code grace}; every descendant too; every replica. */
  void stop(Duration grace) throws InterruptedException {
    for (Replica replica : replicas) {
      replica.process().destroy();
    }
    for (Replica replica : replicas) {
      List<ProcessHandle> descendants = replica.process().descendants().toList();
      if (!replica.process().waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        replica.process().destroyForcibly();
        replica.process().waitFor();
      }
      descendants.forEach(ProcessHandle::destroyForcibly);
    }
  }

  @Override
  public void close() {
    try {
      stop(Duration.ofSeconds(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      replicas.forEach(replica -> replica.process().destroyForcibly());
    }
  }
}
