package dev.metareactor.engine.faults;

import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.testing.k8s.ControlPlane;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import dev.metareactor.testing.k8s.LoopbackPorts;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What every fault test shares: a fresh {@link FaultLoad} on the real control plane, engines started as users start
 * them (the jar, a process of its own, hosting only this load's controllers), and the one {@link Invariants} check
 * each test waits for after its fault.
 *
 * <p>A class whose faults leave the load and its engine as they found them may share one load and one engine among
 * its tests instead ({@link SharedLoadFaultSuite}): their convergence is then paid once, not once per test.
 */
@LocalKubernetes
abstract class FaultSuite {

  static final Duration CONVERGE = Duration.ofMinutes(3);
  static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

  FaultLoad load;
  Invariants invariants;
  /** The ports of the engine started last (a test may point them at another one). */
  int metricsPort;
  int healthPort;
  private Path dir;

  /**
   * Each test's own load, unless the class shares one. The engines' logs go to
   * {@code target/fault-logs/<class>/<test>/}, kept for a look after a failure.
   */
  @BeforeEach
  void load(LocalCluster cluster, TestInfo test) throws IOException {
    if (sharesLoad()) {
      return;
    }
    String method = test.getTestMethod().map(Method::getName).orElse("test");
    // A parameterized test's runs each get their own directory.
    String run = test.getDisplayName().startsWith(method) ? "" : "-" + test.getDisplayName().replaceAll("\\W+", "_");
    makeLoad(cluster, Path.of("target", "fault-logs", getClass().getSimpleName(), method + run));
  }

  /** Makes {@link #load} on {@code cluster}; the engines started from now on write their logs into {@code logs}. */
  final void makeLoad(LocalCluster cluster, Path logs) throws IOException {
    this.load = new FaultLoad(cluster, parentCount());
    this.invariants = new Invariants(load);
    this.dir = Files.createDirectories(logs);
  }

  /** Whether the class's tests share one load ({@link SharedLoadFaultSuite}) rather than each making its own. */
  boolean sharesLoad() {
    return false;
  }

  /** How many parents the load has. */
  int parentCount() {
    return FaultLoad.PARENTS;
  }

  /** Where the engines' logs of this test go. */
  Path logs() {
    return dir;
  }

  @AfterEach
  void unload() {
    if (!sharesLoad()) {
      load.close();
    }
  }

  /** Thousands of children of the loads' deleted CRDs would slow the garbage collector for every later test. */
  @AfterAll
  static void restartGarbageCollector() {
    ControlPlane.get().restartGarbageCollector();
  }

  /** Starts an engine; {@link #metricsPort} and {@link #healthPort} are its ports from now on. */
  EngineProcess engine(String name, String... flags) {
    List<String> all = new ArrayList<>(List.of("--kubeconfig=" + load.cluster.kubeconfig()));
    all.addAll(List.of(flags));
    return engine(name, Map.of(), all);
  }

  /**
   * Starts an engine configured as in a pod, from {@code pod}'s environment ({@code KUBERNETES_SERVICE_HOST} and
   * the service-account directory); {@link #metricsPort} and {@link #healthPort} are its ports from now on.
   */
  EngineProcess inClusterEngine(String name, Map<String, String> pod, String... flags) {
    return engine(name, pod, List.of(flags));
  }

  private EngineProcess engine(String name, Map<String, String> env, List<String> flags) {
    metricsPort = LoopbackPorts.free();
    healthPort = LoopbackPorts.free();
    List<String> all = new ArrayList<>(List.of(
        "--metrics-address=127.0.0.1:" + metricsPort, "--health-probe-bind-address=127.0.0.1:" + healthPort,
        "--target-label-selector=metareactor.dev/hosted-by=" + load.hostedBy, "--discovery-interval=1s",
        "--workers=16", "--client-go-qps=300", "--client-go-burst=600",
        "--shutdown-timeout=" + SHUTDOWN_TIMEOUT.toSeconds() + "s"));
    all.addAll(flags);
    Map<String, String> environment = new HashMap<>(engineEnvironment());
    environment.putAll(env);
    return EngineProcess.start(dir.resolve(name + ".log"), environment, all.toArray(String[]::new));
  }

  /** Environment variables of the engines this suite starts (a JVM setting, say); none by default. */
  Map<String, String> engineEnvironment() {
    return Map.of();
  }

  /** Creates the load's controllers and objects, starts an engine and waits until it has converged them. */
  EngineProcess convergedEngine(String name, String... flags) {
    load.createControllers();
    load.createObjects("one");
    EngineProcess engine = engine(name, flags);
    try {
      awaitInvariants();
      return engine;
    } catch (RuntimeException | Error e) {
      engine.close();
      throw e;
    }
  }

  /** Waits until every invariant holds; fails with what was left if they do not within {@link #CONVERGE}. */
  Duration awaitInvariants() {
    long start = System.nanoTime();
    AtomicReference<List<String>> last = new AtomicReference<>(List.of("never checked"));
    try {
      await().atMost(CONVERGE).pollInterval(Duration.ofMillis(250)).until(() -> {
        last.set(invariants.violations(metricsPort, healthPort));
        return last.get().isEmpty();
      });
    } catch (ConditionTimeoutException e) {
      List<String> left = last.get();
      throw new AssertionError("invariants still broken after " + CONVERGE + " (" + left.size() + "): "
          + left.subList(0, Math.min(20, left.size())), e);
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  /** Waits until a quarter of the parents show {@code value} in their status: an update wave in full swing. */
  void awaitWaveUnderway(String value) {
    await().atMost(CONVERGE).pollInterval(Duration.ofMillis(100)).until(() -> load.parentList().stream()
        .filter(parent -> value.equals(((Map<?, ?>) parent.getAdditionalProperties().getOrDefault("status",
            Map.of())).get("value"))).count() >= load.parentCount / 4);
  }
}
