package dev.metareactor.apply.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged {@code apply/target/metareactor-apply.jar}, run as a user would run it. */
class ApplyJarIT {

  @TempDir
  Path dir;

  record Run(int exitCode, String stdout, String stderr) {}

  private static Run java(String... args) throws IOException, InterruptedException {
    Path jar = Path.of("target", "metareactor-apply.jar");
    assertThat(jar).exists();
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String[] command = new String[args.length + 3];
    command[0] = javaBin;
    command[1] = "-jar";
    command[2] = jar.toString();
    System.arraycopy(args, 0, command, 3, args.length);
    Process process = new ProcessBuilder(command).start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Run(process.exitValue(),
        new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
        new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  @Test
  void previewsAnUpdate() throws Exception {
    Path observed = Files.writeString(dir.resolve("o.json"),
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"x\":\"1\"}}");
    Path desired = Files.writeString(dir.resolve("d.json"),
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"y\":\"<2>\"}}");

    Run run = java("--observed", observed.toString(), "--desired", desired.toString(), "--compact");

    assertThat(run.exitCode()).isZero();
    assertThat(run.stderr()).isEmpty();
    assertThat(run.stdout()).startsWith("{\"changed\":true,\"object\":{")
        .contains("\"data\":{\"x\":\"1\",\"y\":\"<2>\"}")
        .contains("\\\"y\\\":\\\"\\\\u003c2\\\\u003e\\\"");
  }

  @Test
  void invalidJsonExitsTwoWithOneLine() throws Exception {
    Path desired = Files.writeString(dir.resolve("d.json"), "{ nope");
    Run run = java("--desired", desired.toString());
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stdout()).isEmpty();
    assertThat(run.stderr().strip()).startsWith("metareactor-apply: ").doesNotContain("\n");
  }
}
