package dev.metareactor.http.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS 1.2 minimum must hold where the JDK would allow less. JDK 17 disables TLS 1.0 and 1.1 by default, so a check
 * in this JVM passes with or without {@link TlsMaterials}' own restriction; a child JVM whose security properties
 * re-enable TLS 1.0 and 1.1 (as an older JDK or an edited {@code java.security} does) tells the two apart.
 */
class TlsMinimumTest {

  @Test
  void clientContextsStayAtTls12WhenTheJdkAllowsTls11(@TempDir Path dir) throws Exception {
    Path security = dir.resolve("java.security");
    Files.writeString(security, "jdk.tls.disabledAlgorithms=SSLv3\n");

    Map<String, List<String>> enabled = runChild(
        "-Djava.security.properties=" + security,
        "-Djdk.tls.client.protocols=TLSv1,TLSv1.1,TLSv1.2,TLSv1.3");

    assertThat(enabled.get("jdk")).as("the child JVM's own default, or this test proves nothing")
        .contains("TLSv1", "TLSv1.1");
    assertThat(enabled.get("hook")).containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
  }

  /** Runs {@link EnabledProtocols} on this JVM's java and class path; returns its lines by prefix. */
  private static Map<String, List<String>> runChild(String... jvmOptions) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(List.of(jvmOptions));
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), EnabledProtocols.class.getName()));
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("child JVM finished").isTrue();
    assertThat(child.exitValue()).as(output).isZero();
    return output.lines()
        .filter(line -> line.startsWith("jdk: ") || line.startsWith("hook: "))
        .collect(Collectors.toMap(line -> line.substring(0, line.indexOf(':')),
            line -> List.of(line.substring(line.indexOf(": ") + 2).split(","))));
  }
}
