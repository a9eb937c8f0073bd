package dev.metareactor.engine.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import dev.metareactor.testing.k8s.LoopbackPorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable jar as a user runs it: {@code java -jar engine/target/metareactor.jar [flags]}. */
@LocalKubernetes
class EngineJarIT {

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void theJarServesProbesAndMetricsAndStopsCleanlyOnSigterm(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    EngineUnderTest.installCrds(cluster);
    int metricsPort = LoopbackPorts.free();
    int healthPort = LoopbackPorts.free();
    try (EngineProcess engine = EngineProcess.start(dir.resolve("engine.log"), "--kubeconfig=" + cluster.kubeconfig(),
        "--metrics-address=127.0.0.1:" + metricsPort, "--health-probe-bind-address=127.0.0.1:" + healthPort,
        "--target-label-selector=metareactor.dev/hosted-by=nothing", "--zap-devel", "--zap-log-level=info")) {
      await().atMost(Duration.ofSeconds(90)).ignoreExceptions()
          .until(() -> get(healthPort, "/readyz").statusCode() == 200);
      assertThat(get(healthPort, "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(metricsPort, "/metrics").body())
          .contains("workqueue_depth{controller=\"composite-metacontroller\"")
          .contains("jvm_memory_used_bytes");

      engine.terminate();
      Integer exit = engine.awaitExit(60);
      assertThat(exit).as(engine.output()).isZero();
      assertThat(engine.output()).contains("stopping (SIGTERM)").contains("shut down");
    }
  }

  @Test
  void aBadFlagValueExitsWithTwoAndOneLine(@TempDir Path dir) throws Exception {
    try (EngineProcess engine = EngineProcess.start(dir.resolve("engine.log"), "--workers=many")) {
      assertThat(engine.awaitExit(60)).isEqualTo(2);
      List<String> lines = engine.lines();
      assertThat(lines).hasSize(1);
      assertThat(lines.get(0)).startsWith("metareactor: ").contains("--workers").endsWith("(see --help)");
    }
  }

  /**
   * engine/bin/metareactor with a debugger's agent in {@code JAVA_OPTS} and no class-data archive yet: the JVM
   * refuses to write an archive with an agent, so the launcher does not ask it to, and the engine starts.
   */
  @Test
  void theLauncherStartsTheEngineWithAnAgentInJavaOpts(LocalCluster cluster, @TempDir Path dir) throws Exception {
    Path launcher = cluster.controlPlane().repoRoot().resolve("engine/bin/metareactor");
    ProcessBuilder builder = new ProcessBuilder("bash", launcher.toString(), "--version").redirectErrorStream(true)
        .redirectOutput(dir.resolve("launcher.log").toFile());
    builder.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    builder.environment().put("XDG_CACHE_HOME", dir.resolve("cache").toString());
    builder.environment().put("JAVA_OPTS", "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0");
    Process process = builder.start();

    assertThat(process.waitFor()).as("exit code; the output:%n%s", Files.readString(dir.resolve("launcher.log")))
        .isZero();
    assertThat(Files.readString(dir.resolve("launcher.log"))).contains("Listening for transport dt_socket");
  }

  private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
