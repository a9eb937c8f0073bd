package dev.metareactor.testing.k8s;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one control plane of this JVM: started on first use by running {@code hack/local-cluster.sh up} with a state
 * directory private to this JVM, and stopped by a shutdown hook that runs {@code hack/local-cluster.sh down}.
 *
 * <p>To run tests against a control plane that is already up (for quick iterations), set the system property
 * {@value #KUBECONFIG_PROPERTY} (or the environment variable {@value #KUBECONFIG_ENV}) to its kubeconfig; it is then
 * neither started nor stopped here, e.g. {@code eval "$(hack/local-cluster.sh up)"; mvn verify
 * -Dmetareactor.it.kubeconfig=$KUBECONFIG}.
 */
public final class ControlPlane {

  public static final String KUBECONFIG_PROPERTY = "metareactor.it.kubeconfig";
  public static final String KUBECONFIG_ENV = "METAREACTOR_IT_KUBECONFIG";
  /** Upper bound in minutes for {@code up}, which may include a cold build of the binaries (6-10 min on 2 cores). */
  public static final String UP_TIMEOUT_PROPERTY = "metareactor.it.upTimeoutMinutes";

  static final String SCRIPT = "hack/local-cluster.sh";

  private static final Logger LOG = LoggerFactory.getLogger(ControlPlane.class);

  private static ControlPlane instance;
  private static RuntimeException startFailure;

  private final Path repoRoot;
  private final Path kubeconfig;
  private final Path kubectl;
  private final Path stateDir; // null when the cluster is external

  private ControlPlane(Path repoRoot, Path kubeconfig, Path kubectl, Path stateDir) {
    this.repoRoot = repoRoot;
    this.kubeconfig = kubeconfig;
    this.kubectl = kubectl;
    this.stateDir = stateDir;
  }

  /**
   * The control plane of this JVM, started on the first call. A failed start is tried once more: the script checks
   * that a port is free before the component that will listen on it starts, so two JVMs starting control planes at
   * once (Failsafe's forks) can both pick the same one, and one of them fails with "address already in use". A
   * second failure is final.
   */
  public static synchronized ControlPlane get() {
    if (instance != null) {
      return instance;
    }
    if (startFailure != null) {
      throw new IllegalStateException("the local control plane failed to start earlier in this JVM", startFailure);
    }
    try {
      try {
        instance = start();
      } catch (RuntimeException first) {
        LOG.warn("The local control plane failed to start; trying once more", first);
        instance = start();
      }
      return instance;
    } catch (RuntimeException e) {
      startFailure = e;
      throw e;
    }
  }

  public Path kubeconfig() {
    return kubeconfig;
  }

  public Path kubectlBinary() {
    return kubectl;
  }

  public Path repoRoot() {
    return repoRoot;
  }

  /**
   * Stops one component ({@code etcd}, {@code kube-apiserver}, {@code kube-controller-manager}) and starts it again
   * with the same flags and port, returning once it is healthy: {@code hack/local-cluster.sh restart}, whose
   * options ({@code --kill}, {@code --down-for=SECONDS}) {@code options} passes on. For fault tests.
   */
  public void restart(String component, String... options) {
    List<String> command = new ArrayList<>(List.of("restart", component));
    command.addAll(List.of(options));
    script(command);
  }

  /**
   * Restarts kube-controller-manager so that its garbage collector starts over with an empty work queue, for a test
   * class that made thousands of objects owned by custom resources of CRDs it then deleted. The collector learns a new
   * CRD only at its next discovery resync (every 30 s); until then the owners of such children fail (no REST mapping)
   * and are retried through its queue's one rate limit for retries (10 per second), and once the CRD is gone they
   * fail for as long as the collector runs. After a few thousand of them every retry of the collector waits minutes
   * behind them: a later test's children of a fresh CRD are collected minutes late. Does nothing on a control plane
   * that hack/local-cluster.sh did not start (its components cannot be restarted from here).
   */
  public void restartGarbageCollector() {
    if (restartable()) {
      restart("kube-controller-manager");
    }
  }

  /** Stops one component with SIGSTOP (it holds its connections and answers nothing) until {@link #resume}. */
  public void pause(String component) {
    script(List.of("pause", component));
  }

  /** Lets a {@link #pause paused} component go on (SIGCONT). */
  public void resume(String component) {
    script(List.of("resume", component));
  }

  /** Compacts etcd's history up to its current revision: a watch resumed from before it gets 410 Gone. */
  public void compactEtcd() {
    script(List.of("compact"));
  }

  /**
   * Runs {@code hack/local-cluster.sh} on this control plane's state: the one this JVM started, or an external one
   * that the script started (its kubeconfig beside its state).
   */
  private void script(List<String> arguments) {
    if (!restartable()) {
      throw new IllegalStateException("the control plane of " + kubeconfig + " was not started by " + SCRIPT
          + ": its components cannot be restarted from here");
    }
    List<String> command = new ArrayList<>(List.of("bash", repoRoot.resolve(SCRIPT).toString()));
    command.addAll(arguments);
    run(repoRoot, command, Map.of("METAREACTOR_STATE", scriptState().toString()), 5);
  }

  /** True when {@code hack/local-cluster.sh} started this control plane, so its components can be restarted. */
  public boolean restartable() {
    Path state = scriptState();
    return state != null && Files.isRegularFile(state.resolve("endpoints"));
  }

  /**
   * The state directory {@code hack/local-cluster.sh} keeps for this control plane ({@code METAREACTOR_STATE}): a
   * script given it reuses this control plane instead of starting one of its own.
   *
   * @throws IllegalStateException when the script did not start this control plane ({@link #restartable})
   */
  public Path localClusterState() {
    if (!restartable()) {
      throw new IllegalStateException("the control plane of " + kubeconfig + " was not started by " + SCRIPT);
    }
    return scriptState();
  }

  private Path scriptState() {
    return stateDir != null ? stateDir : kubeconfig.getParent();
  }

  /** True when this JVM started the control plane (and will stop it at exit). */
  public boolean managed() {
    return stateDir != null;
  }

  private static ControlPlane start() {
    Path root = findRepoRoot(Path.of(System.getProperty("user.dir")));
    String external = System.getProperty(KUBECONFIG_PROPERTY, System.getenv(KUBECONFIG_ENV));
    if (external != null && !external.isBlank()) {
      Path kc = Path.of(external).toAbsolutePath();
      if (!Files.isReadable(kc)) {
        throw new IllegalStateException(KUBECONFIG_PROPERTY + " points to an unreadable file: " + kc);
      }
      Path bin = Path.of(run(root, List.of("bash", root.resolve("hack/build-k8s.sh").toString()), Map.of(),
          Long.getLong(UP_TIMEOUT_PROPERTY, 70)));
      LOG.info("Using the external control plane of {}", kc);
      return new ControlPlane(root, kc, bin.resolve("kubectl"), null);
    }

    Path state;
    try {
      Path base = Path.of(System.getProperty("java.io.tmpdir"));
      state = Files.createTempDirectory(base, "metareactor-it-").resolve("cluster");
    } catch (IOException e) {
      throw new IllegalStateException("cannot create a state directory", e);
    }
    ControlPlane plane = new ControlPlane(root, state.resolve("kubeconfig"), state.resolve("bin/kubectl"), state);
    // Registered before `up` so that a JVM that exits during a slow start still stops what was started
    // (`down` waits for the lock that `up` holds).
    Runtime.getRuntime().addShutdownHook(new Thread(plane::stop, "metareactor-control-plane-down"));
    long t0 = System.nanoTime();
    LOG.info("Starting the local control plane: {} up (state {}); the first run on a machine builds the binaries"
        + " first (6-10 min on 2 cores)", SCRIPT, state);
    // The watchdog of `up` stops the control plane even if this JVM is killed (no shutdown hook then).
    run(root, List.of("bash", root.resolve(SCRIPT).toString(), "up"),
        Map.of("METAREACTOR_STATE", state.toString(),
            "METAREACTOR_OWNER_PID", Long.toString(ProcessHandle.current().pid())),
        Long.getLong(UP_TIMEOUT_PROPERTY, 70));
    LOG.info("Local control plane ready after {} s: {}", (System.nanoTime() - t0) / 1_000_000_000L,
        plane.kubeconfig);
    return plane;
  }

  private void stop() {
    try {
      run(repoRoot, List.of("bash", repoRoot.resolve(SCRIPT).toString(), "down"),
          Map.of("METAREACTOR_STATE", stateDir.toString()), 2);
      // `down` removed the state dir and its lock file beside it; what is left is our temp dir.
      Files.deleteIfExists(stateDir.getParent());
    } catch (RuntimeException | IOException e) {
      System.err.println("metareactor: '" + SCRIPT + " down' failed: " + e);
    }
  }

  /**
   * Runs a command, forwarding its output (stdout and stderr merged) line by line to System.err, and returns the
   * last line. Forwarding through Java keeps the output inside Surefire's channel instead of writing to the forked
   * JVM's native stdout.
   */
  private static String run(Path root, List<String> command, Map<String, String> env, long timeoutMinutes) {
    String what = String.join(" ", command);
    ProcessBuilder pb = new ProcessBuilder(command).directory(root.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + what, e);
    }
    AtomicReference<String> last = new AtomicReference<>("");
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          System.err.println("[local-cluster] " + line);
          if (!line.isBlank()) {
            last.set(line.trim());
          }
        }
      } catch (IOException e) {
        System.err.println("[local-cluster] output lost: " + e);
      }
    }, "metareactor-script-output");
    pump.setDaemon(true);
    pump.start();
    try {
      if (!p.waitFor(timeoutMinutes, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException(what + " did not finish within " + timeoutMinutes
            + " min (system property " + UP_TIMEOUT_PROPERTY + ")");
      }
      pump.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IllegalStateException("interrupted while running " + what, e);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(what + " failed with exit code " + p.exitValue()
          + "; its messages are in the test output above (prefixed [local-cluster])");
    }
    return last.get();
  }

  /** The nearest directory at or above {@code start} that contains {@value #SCRIPT}. */
  static Path findRepoRoot(Path start) {
    for (Path dir = start.toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(SCRIPT))) {
        return dir;
      }
    }
    throw new IllegalStateException("no " + SCRIPT + " found in " + start.toAbsolutePath() + " or above it");
  }
}
