package dev.metareactor.engine.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;

/**
 * The engine's container image as the build made it ({@code target/image}, an OCI image layout written by
 * {@code image/build.sh}), unpacked once per JVM by umoci ({@code hack/image-tools.sh}), which checks every digest of
 * the layout on the way, as a registry and a container runtime would. Its configuration is read from the image's own
 * config blob, as a kubelet's runtime reads it.
 */
public final class ContainerImage {

  /** The layout the engine's package phase builds. */
  public static final Path LAYOUT = Path.of("target", "image");

  private static ContainerImage unpacked;

  private final Path rootfs;
  private final JsonNode config;
  private final Path tools;

  private ContainerImage(Path rootfs, JsonNode config, Path tools) {
    this.rootfs = rootfs;
    this.config = config;
    this.tools = tools;
  }

  /** The image, unpacked on the first call into a directory of its own (removed when the JVM exits). */
  public static synchronized ContainerImage unpacked(Path repoRoot) {
    if (unpacked == null) {
      unpacked = unpack(repoRoot);
    }
    return unpacked;
  }

  private static ContainerImage unpack(Path repoRoot) {
    assertThat(LAYOUT.resolve("index.json")).as("the image, built by the package phase (image/build.sh)").exists();
    try {
      Path tools = Path.of(run(repoRoot, List.of("bash", repoRoot.resolve("hack/image-tools.sh").toString()))
          .strip().lines().reduce((first, second) -> second).orElseThrow());
      JsonNode index = KubeJson.mapper().readTree(LAYOUT.resolve("index.json").toFile());
      JsonNode manifestRef = index.path("manifests").get(0);
      String tag = manifestRef.path("annotations").path("org.opencontainers.image.ref.name").asString();
      JsonNode manifest = KubeJson.mapper().readTree(blob(manifestRef.path("digest").asString()).toFile());
      JsonNode config = KubeJson.mapper().readTree(blob(manifest.path("config").path("digest").asString()).toFile());

      // A directory every user may enter: the container runs as the image's user, not as whoever runs the test.
      Path bundleParent = Files.createTempDirectory("metareactor-image-",
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
      Path bundle = bundleParent.resolve("bundle");
      List<String> unpack = new ArrayList<>(List.of(tools.resolve("umoci").toString(), "unpack"));
      if (!isRoot()) {
        unpack.add("--rootless");
      }
      unpack.addAll(List.of("--image", LAYOUT.toAbsolutePath() + ":" + tag, bundle.toString()));
      run(repoRoot, unpack);
      Files.setPosixFilePermissions(bundle, PosixFilePermissions.fromString("rwxr-xr-x"));
      Runtime.getRuntime().addShutdownHook(new Thread(() -> removeTree(bundleParent), "metareactor-image-cleanup"));
      // bubblewrap and its libraries where the container's user can run them (the tool cache may be under a home
      // directory only its owner enters, such as root's).
      Path copied = bundleParent.resolve("tools");
      Path toolRoot = tools.getParent().resolve("root");
      Files.createDirectories(copied.resolve("lib"));
      Files.copy(toolRoot.resolve("usr/bin/bwrap"), copied.resolve("bwrap"));
      for (String libraries : List.of("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu")) {
        if (Files.isDirectory(toolRoot.resolve(libraries))) {
          try (var files = Files.list(toolRoot.resolve(libraries))) {
            for (Path library : files.toList()) {
              Files.copy(library, copied.resolve("lib").resolve(library.getFileName()), LinkOption.NOFOLLOW_LINKS);
            }
          }
        }
      }
      run(repoRoot, List.of("chmod", "-R", "a+rX", copied.toString()));
      return new ContainerImage(bundle.resolve("rootfs"), config.path("config"), copied);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The unpacked root filesystem. */
  public Path rootfs() {
    return rootfs;
  }

  /** bubblewrap, where every user may run it. */
  public Path bwrap() {
    return tools.resolve("bwrap");
  }

  /** The libraries bubblewrap runs with ({@code LD_LIBRARY_PATH}). */
  public Path bwrapLibraries() {
    return tools.resolve("lib");
  }

  public List<String> entrypoint() {
    return strings(config.path("Entrypoint"));
  }

  public List<String> cmd() {
    return strings(config.path("Cmd"));
  }

  /** {@code Env}, by name, in the image's order. */
  public Map<String, String> env() {
    Map<String, String> env = new LinkedHashMap<>();
    for (String entry : strings(config.path("Env"))) {
      env.put(entry.substring(0, entry.indexOf('=')), entry.substring(entry.indexOf('=') + 1));
    }
    return env;
  }

  /** {@code User}: {@code uid[:gid]}. */
  public String user() {
    return config.path("User").asString("");
  }

  public String workingDir() {
    return config.path("WorkingDir").asString("/");
  }

  /** The image's configuration ({@code config} of its config blob), for tests that read more of it. */
  public JsonNode config() {
    return config;
  }

  /** The home directory of {@code uid} in the image's {@code /etc/passwd} ({@code /} when it has none). */
  public String home(long uid) {
    try {
      for (String line : Files.readAllLines(rootfs.resolve("etc/passwd"), StandardCharsets.UTF_8)) {
        String[] fields = line.split(":");
        if (fields.length > 5 && fields[2].equals(Long.toString(uid))) {
          return fields[5];
        }
      }
      return "/";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static boolean isRoot() {
    try {
      return Files.getAttribute(Path.of("/proc/self"), "unix:uid").equals(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path blob(String digest) {
    return LAYOUT.resolve("blobs").resolve(digest.replace(':', '/'));
  }

  private static List<String> strings(JsonNode array) {
    List<String> strings = new ArrayList<>();
    array.forEach(node -> strings.add(node.asString()));
    return strings;
  }

  /** Runs a command to its end; its output, or a failed assertion with it. */
  static String run(Path directory, List<String> command) {
    try {
      Path out = Files.createTempFile("metareactor-image-", ".out");
      try {
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
            .redirectOutput(out.toFile()).start();
        assertThat(process.waitFor(10, TimeUnit.MINUTES)).as("%s finished", command).isTrue();
        String output = Files.readString(out, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as("exit code of %s; its output:%n%s", command, output).isZero();
        return output;
      } finally {
        Files.deleteIfExists(out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void removeTree(Path dir) {
    try {
      new ProcessBuilder("rm", "-rf", dir.toString()).inheritIO().start().waitFor(2, TimeUnit.MINUTES);
    } catch (IOException e) {
      System.err.println("metareactor: cannot remove " + dir + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
