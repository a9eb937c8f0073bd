package dev.metareactor.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The container image's configuration, as Jib builds it: every build makes it on an empty base
 * ({@code target/jib-config-check.tar}, the {@code image-config-check} execution in the engine's pom), and this reads
 * that tarball back. The real image differs only in its base (distroless Java 17, which this environment cannot pull),
 * so what is checked here is what the engine's pom decides: the entry point, the user, the ports, the JVM settings
 * file and the classpath. The Dockerfile, which cannot be built here, is held to the same entry point and user.
 */
class ImageConfigIT {

  private static final Path TARBALL = Path.of("target", "jib-config-check.tar");
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private static Map<String, byte[]> outer;
  private static JsonNode config;
  /** Every file of every layer, by path without the leading slash. */
  private static final Map<String, byte[]> files = new HashMap<>();

  @BeforeAll
  static void readImage() throws IOException {
    assertThat(TARBALL).as("built by the package phase").exists();
    outer = untar(Files.newInputStream(TARBALL));
    JsonNode manifest = JSON.readTree(outer.get("manifest.json")).get(0);
    config = JSON.readTree(outer.get(manifest.get("Config").stringValue()));
    for (JsonNode layer : manifest.get("Layers")) {
      byte[] bytes = outer.get(layer.stringValue());
      InputStream in = new ByteArrayInputStream(bytes);
      files.putAll(untar(bytes.length > 2 && bytes[0] == 0x1f && (bytes[1] & 0xff) == 0x8b
          ? new GZIPInputStream(in) : in));
    }
  }

  @Test
  void theEntryPointStartsTheEngineWithTheShippedJvmSettingsAsUid65532() throws IOException {
    JsonNode container = config.get("config");
    assertThat(JSON.treeToValue(container.get("Entrypoint"), String[].class)).containsExactly(
        "java", "@/etc/metareactor/jvm.options", "-cp", "@/app/jib-classpath-file", "dev.metareactor.engine.Main");
    assertThat(container.get("User").stringValue()).isEqualTo("65532:65532");
    assertThat(container.get("ExposedPorts").propertyNames()).containsExactlyInAnyOrder("8081/tcp", "9999/tcp");

    assertThat(files.keySet()).contains("etc/metareactor/jvm.options");
    assertThat(files.get("etc/metareactor/jvm.options")).as("the JVM settings in the image")
        .isEqualTo(Files.readAllBytes(Path.of("src", "main", "jvm", "jvm.options")));
  }

  @Test
  void theClasspathNamesOnlyFilesTheImageHoldsAndTheyHoldTheMainClass() {
    String classpath = new String(files.get("app/jib-classpath-file"), StandardCharsets.UTF_8).strip();
    List<String> entries = List.of(classpath.split(":"));
    assertThat(entries).isNotEmpty();
    for (String entry : entries) {
      // A directory (its files), a directory of jars ("dir/*"), or a file.
      String path = entry.replaceFirst("^/", "").replaceFirst("/\\*$", "");
      assertThat(files.keySet()).as("classpath entry %s", entry)
          .anyMatch(file -> file.equals(path) || file.startsWith(path + "/"));
    }
    assertThat(files.keySet()).as("the dependencies").anyMatch(file -> file.matches("app/libs/reactor-core-.*\\.jar"));
    assertThat(files.keySet()).contains("app/classes/dev/metareactor/engine/Main.class");
  }

  @Test
  void theDockerfileStartsTheSameWayAsTheSameUser() throws IOException {
    String dockerfile = Files.readString(Path.of("..", "Dockerfile"), StandardCharsets.UTF_8);
    assertThat(dockerfile)
        .contains("COPY engine/src/main/jvm/jvm.options /etc/metareactor/jvm.options")
        .contains("USER 65532:65532")
        .contains("EXPOSE 8081 9999")
        .contains("ENTRYPOINT [\"java\", \"@/etc/metareactor/jvm.options\", \"-jar\", \"/app/metareactor.jar\"]");
  }

  /** The regular files of a (POSIX ustar or GNU) tar stream, by name. */
  private static Map<String, byte[]> untar(InputStream in) throws IOException {
    Map<String, byte[]> entries = new HashMap<>();
    try (in) {
      byte[] header = new byte[512];
      String longName = null;
      while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
        String name = field(header, 0, 100);
        String prefix = field(header, 345, 155);
        long size = Long.parseLong(field(header, 124, 12).trim().isEmpty() ? "0" : field(header, 124, 12).trim(), 8);
        char type = (char) header[156];
        byte[] data = in.readNBytes((int) size);
        in.skipNBytes((512 - size % 512) % 512);
        if (type == 'L') { // GNU long name: the next entry's name
          longName = new String(data, StandardCharsets.UTF_8).replace("\0", "");
          continue;
        }
        String path = longName != null ? longName : prefix.isEmpty() ? name : prefix + "/" + name;
        longName = null;
        if (type == '0' || type == 0) {
          entries.put(path.startsWith("/") ? path.substring(1) : path, data);
        }
      }
    }
    return entries;
  }

  private static String field(byte[] header, int offset, int length) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = offset; i < offset + length && header[i] != 0; i++) {
      out.write(header[i]);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
