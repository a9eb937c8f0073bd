package dev.metareactor.apply.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.apply.LastAppliedConfiguration;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ApplyCommandTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  @TempDir
  Path dir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return new ApplyCommand(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8)).run(args);
  }

  private Path file(String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content);
  }

  private String stderr() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void updatePreviewPrintsChangedAndMergedObject() throws IOException {
    String lastApplied = "{\"apiVersion\":\"v1\",\"data\":"
        + "{\"a\":\"1\",\"b\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}";
    Path observed = file("observed.json", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        + "\"resourceVersion\":\"7\",\"annotations\":{\"" + LastAppliedConfiguration.ANNOTATION + "\":"
        + MAPPER.writeValueAsString(lastApplied) + "}},\"data\":{\"a\":\"1\",\"b\":\"2\",\"foreign\":\"x\"}}");
    Path desired = file("desired.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"9\"}}");

    assertThat(run("--observed", observed.toString(), "--desired=" + desired)).isZero();

    JsonNode report = MAPPER.readTree(out.toString(StandardCharsets.UTF_8));
    assertThat(report.get("changed").booleanValue()).isTrue();
    JsonNode object = report.get("object");
    assertThat(object.get("data").toString()).isEqualTo("{\"a\":\"9\",\"foreign\":\"x\"}");
    assertThat(object.at("/metadata/resourceVersion").stringValue()).isEqualTo("7");
    assertThat(LastAppliedConfiguration.raw(object))
        .isEqualTo("{\"apiVersion\":\"v1\",\"data\":{\"a\":\"9\"},\"kind\":\"ConfigMap\",\"metadata\":"
        + "{\"name\":\"c\"}}");
    assertThat(stderr()).isEmpty();
  }

  @Test
  void unchangedObjectReportsFalse() throws IOException {
    String desiredText = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":"
        + "{\"a\":\"1\"}}";
    Path observed = file("observed.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"annotations\":{\""
        + LastAppliedConfiguration.ANNOTATION + "\":" + MAPPER.writeValueAsString(
            "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}")
        + "}},\"data\":{\"a\":\"1\"}}");
    Path desired = file("desired.json", desiredText);

    assertThat(run("--observed", observed.toString(), "--desired", desired.toString(), "--compact")).isZero();

    String printed = out.toString(StandardCharsets.UTF_8).strip();
    assertThat(printed).doesNotContain("\n").startsWith("{\"changed\":false,");
  }

  @Test
  void numbersPrintAsTheEngineWritesThem() throws IOException {
    Path desired = file("desired.json", "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
        + "\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":3.0,\"list\":[1E+2,-0.0],\"big\":"
        + "1e20,\"text\":\"3.0\"}}");

    assertThat(run("--desired", desired.toString(), "--compact")).isZero();

    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("\"spec\":{\"replicas\":3,\"list\":[100,-0],\"big\":100000000000000000000,\"text\":\"3.0\"}");
  }

  @Test
  void withoutObservedPreviewsCreate() throws IOException {
    Path desired = file("desired.json", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}");

    assertThat(run("--desired", desired.toString())).isZero();

    JsonNode report = MAPPER.readTree(out.toString(StandardCharsets.UTF_8));
    assertThat(report.get("changed").booleanValue()).isTrue();
    assertThat(LastAppliedConfiguration.raw(report.get("object")))
        .isEqualTo("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}");
  }

  @Test
  void missingFileIsOneLineErrorAndExitTwo() {
    assertThat(run("--observed", dir.resolve("nope.json").toString(), "--desired", dir.resolve("nope.json").toString()))
        .isEqualTo(2);
    assertThat(stderr()).startsWith("metareactor-apply: cannot read observed file").containsOnlyOnce("\n");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
  }

  @Test
  void invalidJsonIsOneLineErrorAndExitTwo() throws IOException {
    Path desired = file("desired.json", "{\"apiVersion\": \"v1\",\n  \"kind\": ");
    assertThat(run("--desired", desired.toString())).isEqualTo(2);
    assertThat(stderr()).startsWith("metareactor-apply: desired file").contains("is not valid JSON")
        .containsOnlyOnce("\n");
  }

  @Test
  void nonObjectInputIsRejected() throws IOException {
    Path desired = file("desired.json", "[1,2]");
    assertThat(run("--desired", desired.toString())).isEqualTo(2);
    assertThat(stderr()).contains("desired object must be a JSON object");
  }

  @Test
  void brokenLastAppliedAnnotationIsRejected() throws IOException {
    Path observed = file("observed.json", "{\"metadata\":{\"name\":\"c\",\"annotations\":{\""
        + LastAppliedConfiguration.ANNOTATION + "\":\"{not json\"}}}");
    Path desired = file("desired.json", "{\"metadata\":{\"name\":\"c\"}}");
    assertThat(run("--observed", observed.toString(), "--desired", desired.toString())).isEqualTo(2);
    assertThat(stderr()).contains("can't unmarshal \"metacontroller.k8s.io/last-applied-configuration\" annotation");
  }

  @Test
  void badArgumentsExitTwo() {
    assertThat(run()).isEqualTo(2);
    assertThat(stderr()).contains("--desired is required");
    err.reset();
    assertThat(run("--frobnicate")).isEqualTo(2);
    assertThat(stderr()).contains("unknown argument: --frobnicate");
    err.reset();
    assertThat(run("--desired")).isEqualTo(2);
    assertThat(stderr()).contains("missing value for --desired");
  }

  @Test
  void helpExitsZero() {
    assertThat(run("--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("Usage: metareactor-apply");
  }
}
