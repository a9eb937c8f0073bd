package dev.metareactor.engine.install;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MappingIterator;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Every YAML file users apply from the repository ({@code manifests/}, {@code examples/}) parses strictly. A key given
 * twice in one mapping is taken by lenient parsers (the last one wins, so {@code kubectl apply -f} and the tests that
 * install the CRDs that way pass), but refused by {@code kubectl apply -k}, the production install: a CRD with a
 * duplicated {@code cel} block once reached the install tests before anything here noticed.
 */
class ShippedYamlTest {

  /** The repository's root: tests run in the engine module's directory. */
  private static final Path ROOT = Path.of("..");

  private static final YAMLMapper STRICT =
      YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  @Test
  void noMappingOfAShippedYamlFileHasAKeyTwice() throws IOException {
    List<Path> files = shippedYaml();
    assertThat(files).as("the manifests and the examples' objects").hasSizeGreaterThan(20);
    List<String> refused = new ArrayList<>();
    for (Path file : files) {
      try (MappingIterator<JsonNode> documents = STRICT.readerFor(JsonNode.class).readValues(file.toFile())) {
        while (documents.hasNext()) {
          documents.next();
        }
      } catch (JacksonException e) {
        refused.add(ROOT.relativize(file) + ": " + e.getOriginalMessage());
      }
    }
    assertThat(refused).isEmpty();
  }

  /** The YAML files under manifests/ and examples/, but the Helm chart's templates (Go templates, not YAML). */
  private static List<Path> shippedYaml() throws IOException {
    List<Path> files = new ArrayList<>();
    for (String top : List.of("manifests", "examples")) {
      try (Stream<Path> walk = Files.walk(ROOT.resolve(top))) {
        walk.filter(Files::isRegularFile)
            .filter(file -> file.toString().endsWith(".yaml") || file.toString().endsWith(".yml"))
            .filter(file -> !file.toString().contains("/templates/") && !file.toString().contains("/target/"))
            .forEach(files::add);
      }
    }
    return files;
  }
}
