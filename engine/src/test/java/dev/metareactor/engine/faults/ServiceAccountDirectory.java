package dev.metareactor.engine.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A pod's service-account directory as the kubelet projects it (its atomic writer): the files live in a directory
 * {@code ..<n>}, {@code ..data} is a symbolic link to it, and {@code token}, {@code ca.crt} and {@code namespace} are
 * links to {@code ..data/<file>}. A new token is written as the kubelet writes one: into a new {@code ..<n+1>}, then
 * {@code ..data} replaced by a rename (so a reader sees the old files or the new ones, never a mix), then the old
 * directory removed.
 */
final class ServiceAccountDirectory {

  private static final String DATA = "..data";

  private final Path dir;
  private final String ca;
  private final String namespace;
  private int generation;

  ServiceAccountDirectory(Path dir, String ca, String namespace) {
    this.dir = dir;
    this.ca = ca;
    this.namespace = namespace;
  }

  Path path() {
    return dir;
  }

  /** Projects {@code token} (the first time, the whole directory). */
  synchronized void write(String token) {
    try {
      if (generation == 0) {
        delete(dir); // a directory left by an earlier run
      }
      Files.createDirectories(dir);
      Path previous = generation == 0 ? null : dir.resolve(".." + generation);
      generation++;
      Path next = Files.createDirectory(dir.resolve(".." + generation));
      for (Map.Entry<String, String> file : Map.of("token", token, "ca.crt", ca, "namespace", namespace).entrySet()) {
        Files.writeString(next.resolve(file.getKey()), file.getValue(), StandardCharsets.UTF_8);
        Path link = dir.resolve(file.getKey());
        if (!Files.isSymbolicLink(link)) {
          Files.createSymbolicLink(link, Path.of(DATA, file.getKey()));
        }
      }
      Path swap = dir.resolve("..data_tmp");
      Files.deleteIfExists(swap);
      Files.createSymbolicLink(swap, next.getFileName());
      Files.move(swap, dir.resolve(DATA), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      if (previous != null) {
        delete(previous);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path tree) throws IOException {
    if (!Files.exists(tree, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(tree)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    }
  }
}
