package dev.metareactor.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The runnable jar as a user runs it: {@code java -jar engine/target/metareactor.jar [flags]}. */
@LocalKubernetes
class EngineJarIT {

  private static final Path JAR = Path.of("target", "metareactor.jar");
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void theJarServesProbesAndMetricsAndStopsCleanlyOnSigterm(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    EngineUnderTest.installCrds(cluster);
    int metricsPort = freePort();
    int healthPort = freePort();
    Path log = dir.resolve("engine.log");
    Process engine = java(log, "--kubeconfig=" + cluster.kubeconfig(),
        "--metrics-address=127.0.0.1:" + metricsPort, "--health-probe-bind-address=127.0.0.1:" + healthPort,
        "--target-label-selector=metareactor.dev/hosted-by=nothing", "--zap-devel", "--zap-log-level=info");
    try {
      await().atMost(Duration.ofSeconds(90)).ignoreExceptions()
          .until(() -> get(healthPort, "/readyz").statusCode() == 200);
      assertThat(get(healthPort, "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(metricsPort, "/metrics").body())
          .contains("workqueue_depth{controller=\"composite-metacontroller\"")
          .contains("jvm_memory_used_bytes");

      engine.destroy(); // SIGTERM
      assertThat(engine.waitFor(60, TimeUnit.SECONDS)).as("stopped within a minute").isTrue();
      String output = Files.readString(log, StandardCharsets.UTF_8);
      assertThat(engine.exitValue()).as(output).isZero();
      assertThat(output).contains("stopping (SIGTERM)").contains("shut down");
    } finally {
      engine.destroyForcibly();
    }
  }

  @Test
  void aBadFlagValueExitsWithTwoAndOneLine(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("engine.log");
    Process engine = java(log, "--workers=many");
    assertThat(engine.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(engine.exitValue()).isEqualTo(2);
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0)).startsWith("metareactor: ").contains("--workers").endsWith("(see --help)");
  }

  private static Process java(Path log, String... flags) throws IOException {
    assertThat(JAR).as("built by the package phase").exists();
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", JAR.toString()));
    command.addAll(List.of(flags));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
