package dev.metareactor.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The examples' own end-to-end scripts, run as a user runs them: {@code examples/hello-world/test.sh} against the
 * local control plane, with an engine in this JVM hosting every controller (the script creates its controller with
 * kubectl, unlabelled), once with the Python hook and once with the Java one.
 */
@LocalKubernetes
class ExamplesIT {

  /** The script's own waits are bounded (60 s each, 120 s for garbage collection); this only catches a hang. */
  private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(6);

  private LocalCluster cluster;
  private EngineUnderTest engine;
  private Path repo;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.repo = cluster.controlPlane().repoRoot();
    this.engine = EngineUnderTest.startHostingAll(cluster);
  }

  @AfterEach
  void closeEngine() {
    engine.close();
  }

  @Test
  void helloWorldWithThePythonHook(@TempDir Path dir) throws Exception {
    runHelloWorldTest(dir, Map.of());
  }

  @Test
  void helloWorldWithTheJavaHook(@TempDir Path dir) throws Exception {
    Path jar = repo.resolve("examples/hello-world-java/target/hello-hook.jar");
    assertThat(jar).as("built by examples/hello-world-java, which the reactor builds before engine").exists();
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    runHelloWorldTest(dir, Map.of("HOOK_CMD", java + " -jar " + jar));
  }

  /** Runs the script with the given extra environment and asserts it exits 0, showing its output if not. */
  private void runHelloWorldTest(Path dir, Map<String, String> env) throws IOException, InterruptedException {
    Path output = dir.resolve("test.log");
    // Output to a file, not inherited: writing to the forked JVM's stdout would corrupt Failsafe's channel.
    ProcessBuilder builder = new ProcessBuilder("bash", repo.resolve("examples/hello-world/test.sh").toString())
        .directory(repo.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectErrorStream(true)
        .redirectOutput(output.toFile());
    builder.environment().put("KUBECONFIG", cluster.kubeconfig().toString());
    builder.environment().put("KUBECTL", cluster.controlPlane().kubectlBinary().toString());
    builder.environment().put("NAMESPACE", cluster.namespace());
    builder.environment().putAll(env);
    Process script = builder.start();
    try {
      boolean exited = script.waitFor(SCRIPT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      String log = Files.readString(output, StandardCharsets.UTF_8);
      assertThat(exited).as("test.sh finished within %s; its output so far:%n%s", SCRIPT_TIMEOUT, log).isTrue();
      assertThat(script.exitValue()).as("exit code of examples/hello-world/test.sh; its output:%n%s", log).isZero();
      assertThat(log).contains("hello-world test: PASSED");
    } finally {
      stopScript(script);
    }
  }

  /**
   * SIGTERM first: the script's EXIT trap then stops its hook and deletes what it created. A script that ignores
   * it is killed with its whole tree, and its cluster-scoped objects are deleted here instead.
   */
  private void stopScript(Process script) throws InterruptedException {
    if (!script.isAlive()) {
      return;
    }
    List<ProcessHandle> tree = script.descendants().toList();
    script.destroy();
    if (script.waitFor(30, TimeUnit.SECONDS)) {
      return;
    }
    script.destroyForcibly();
    tree.forEach(ProcessHandle::destroyForcibly);
    cluster.kubectl("delete", "compositecontroller", "hello-world", "--ignore-not-found");
    cluster.kubectl("delete", "crd", "hellos.examples.metareactor.dev", "--ignore-not-found", "--wait=false");
  }
}
