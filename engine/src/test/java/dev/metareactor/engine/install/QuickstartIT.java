package dev.metareactor.engine.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.metareactor.testing.k8s.ControlPlane;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import dev.metareactor.testing.k8s.LoopbackPorts;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * README's first command as a user runs it: {@code hack/quickstart.sh} builds nothing (the build made the jar),
 * finds the local control plane running and reuses it (this one, through its {@code METAREACTOR_STATE}), installs
 * the CRDs and the hello-world example, starts its hook and the engine, and says so once the example's ConfigMap
 * is there; SIGTERM (Ctrl-C's twin) then stops the engine and the hook, and the script exits 0.
 *
 * <p>What the script leaves in the cluster on purpose (the example's CRD, controller and Hello, for the user to
 * play with) is deleted afterwards: ExamplesIT's hello-world refuses to run where a controller of its name exists.
 */
@LocalKubernetes
class QuickstartIT {

  /** The script's own waits are bounded (60 s each); this only catches a hang. */
  private static final Duration CONVERGED = Duration.ofMinutes(3);
  private static final String SAID = "quickstart: ConfigMap default/hello-greeting says: Hello, World";

  @Test
  void theQuickStartRunsTheHelloWorldExampleOnTheLocalControlPlaneAndStopsCleanlyOnSigterm(LocalCluster cluster)
      throws Exception {
    ControlPlane plane = cluster.controlPlane();
    assumeTrue(plane.restartable(), "the control plane was not started by hack/local-cluster.sh");
    Path repo = plane.repoRoot();
    Path output = repo.resolve("engine/target/quickstart-it.log");
    ProcessBuilder builder = new ProcessBuilder("bash", repo.resolve("hack/quickstart.sh").toString())
        .directory(repo.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectErrorStream(true)
        .redirectOutput(output.toFile());
    builder.environment().remove("KUBECONFIG");
    builder.environment().put("METAREACTOR_STATE", plane.localClusterState().toString());
    builder.environment().put("METRICS_PORT", String.valueOf(LoopbackPorts.free()));
    builder.environment().put("HEALTH_PORT", String.valueOf(LoopbackPorts.free()));
    Process script = builder.start();
    List<ProcessHandle> started = List.of();
    try {
      await().atMost(CONVERGED).pollInterval(Duration.ofMillis(500))
          .failFast("the script ended", () -> !script.isAlive())
          .until(() -> Files.readString(output).contains(SAID));
      assertThat(Files.readString(output)).contains("already running", "reusing it");
      List<ProcessHandle> children = script.descendants().toList();
      started = children;
      assertThat(children).as("the hook and the engine the script started").isNotEmpty();

      script.destroy(); // SIGTERM
      assertThat(script.waitFor(60, TimeUnit.SECONDS)).as("the script ends on SIGTERM").isTrue();
      assertThat(script.exitValue()).as("its exit code; its output:%n%s", Files.readString(output)).isZero();
      await("the hook and the engine gone with the script").atMost(Duration.ofSeconds(30))
          .until(() -> children.stream().noneMatch(ProcessHandle::isAlive));
      assertThat(Files.readString(output)).doesNotContain("quickstart: ERROR");
    } finally {
      script.destroyForcibly();
      started.forEach(ProcessHandle::destroyForcibly);
      cluster.kubectl("delete", "hello", "hello", "-n", "default", "--ignore-not-found", "--wait=false");
      cluster.kubectl("delete", "compositecontroller", "hello-world", "--ignore-not-found");
      cluster.kubectl("delete", "crd", "hellos.examples.metareactor.dev", "--ignore-not-found", "--wait=false");
    }
  }
}
