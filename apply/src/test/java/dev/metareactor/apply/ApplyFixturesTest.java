package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Runs every case under {@code src/test/resources/fixtures/}. A case holds {@code observed} (null for a create),
 * optionally the {@code lastApplied} configuration to record on it (serialized into the annotation as the engine
 * would have written it), {@code desired} (or {@code desiredJson}, raw text, where literal number forms matter),
 * and the {@code expected} result: {@code changed} and the written {@code object} without its last-applied
 * annotation. The annotation is checked on its own against {@code expectedLastApplied}, or against the Go
 * serialization of the desired object.
 */
class ApplyFixturesTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  static Stream<Path> fixtures() throws IOException, URISyntaxException {
    Path dir = Path.of(ApplyFixturesTest.class.getResource("/fixtures").toURI());
    return Files.list(dir).filter(p -> p.toString().endsWith(".json")).sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fixtures")
  void fixture(Path file) throws IOException {
    JsonNode fixture = MAPPER.readTree(Files.readString(file));
    ObjectNode desired = (ObjectNode) (fixture.has("desiredJson")
        ? MAPPER.readTree(fixture.get("desiredJson").stringValue())
        : fixture.get("desired"));
    JsonNode observed = fixture.get("observed");
    if (observed.isNull()) {
      observed = null;
    } else if (fixture.has("lastApplied")) {
      LastAppliedConfiguration.write((ObjectNode) observed, GoJson.marshal(fixture.get("lastApplied")));
    }
    String observedBefore = observed == null ? null : GoJson.marshal(observed);
    String desiredBefore = GoJson.marshal(desired);

    ApplyResult result = DynamicApply.apply(observed, desired);

    JsonNode expected = fixture.get("expected");
    assertThat(result.changed()).as("changed").isEqualTo(expected.get("changed").booleanValue());
    if (expected.has("object")) {
      assertThat(GoJson.marshal(withoutLastApplied(result.object())))
          .as("object written")
          .isEqualTo(GoJson.marshal(expected.get("object")));
    }
    String expectedAnnotation = fixture.has("expectedLastApplied")
        ? fixture.get("expectedLastApplied").stringValue()
        : GoJson.marshal(LastAppliedConfiguration.withoutAnnotation(desired));
    assertThat(LastAppliedConfiguration.raw(result.object())).as("last-applied annotation")
        .isEqualTo(expectedAnnotation);

    assertThat(GoJson.marshal(desired)).as("desired is not mutated").isEqualTo(desiredBefore);
    if (observed != null) {
      assertThat(GoJson.marshal(observed)).as("observed is not mutated").isEqualTo(observedBefore);
      // The steady-state shortcut must agree with the full merge on every case.
      ObjectNode cleanDesired = LastAppliedConfiguration.withoutAnnotation(desired);
      ApplyResult full = DynamicApply.mergeUpdate((ObjectNode) observed, cleanDesired, GoJson.marshal(cleanDesired));
      assertThat(full.changed()).as("full merge agrees on changed").isEqualTo(result.changed());
      assertThat(GoJson.marshal(full.object())).as("full merge agrees on the object")
          .isEqualTo(GoJson.marshal(result.object()));
    }
  }

  private static JsonNode withoutLastApplied(ObjectNode object) {
    ObjectNode copy = LastAppliedConfiguration.withoutAnnotation(object);
    JsonNode annotations = copy.path("metadata").path("annotations");
    if (annotations.isObject() && annotations.isEmpty()) {
      ((ObjectNode) copy.get("metadata")).remove("annotations");
    }
    return copy;
  }
}
