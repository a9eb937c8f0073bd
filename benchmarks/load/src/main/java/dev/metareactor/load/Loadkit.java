package dev.metareactor.load;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Go half of the harness ({@code benchmarks/load/loadkit}): built once per source version into the cache
 * outside the repository, then run as the hook server and as the bulk API clients.
 */
final class Loadkit {

  private static final Logger LOG = LoggerFactory.getLogger(Loadkit.class);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final Path binary;
  private final List<String> credentials;

  private Loadkit(Path binary, List<String> credentials) {
    this.binary = binary;
    this.credentials = List.copyOf(credentials);
  }

  /**
   * Builds {@code loadkit} unless the cache already has this version of its sources.
   *
   * @param credentials {@code --server}, {@code --ca}, {@code --cert}, {@code --key} for the API clients
   */
  static Loadkit build(Path repository, Path cache, List<String> credentials) throws IOException, InterruptedException {
    Path sources = repository.resolve("benchmarks/load/loadkit");
    Path binary = cache.resolve("loadkit").resolve(hashOf(sources)).resolve("loadkit");
    if (!Files.isExecutable(binary)) {
      Files.createDirectories(binary.getParent());
      Path tmp = Files.createTempFile(binary.getParent(), "loadkit", ".tmp");
      LOG.info("building loadkit into {}", binary);
      Process go = new ProcessBuilder("go", "build", "-trimpath", "-o", tmp.toString(), ".")
          .directory(sources.toFile()).inheritIO().start();
      if (go.waitFor() != 0) {
        throw new IllegalStateException("go build of " + sources + " failed");
      }
      Files.move(tmp, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
    return new Loadkit(binary, credentials);
  }

  private static String hashOf(Path sources) throws IOException {
    try (Stream<Path> files = Files.list(sources)) {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (Path file : files.filter(f -> f.toString().endsWith(".go") || f.endsWith("go.mod")).sorted().toList()) {
        digest.update(file.getFileName().toString().getBytes(StandardCharsets.UTF_8));
        digest.update(Files.readAllBytes(file));
      }
      return HexFormat.of().formatHex(digest.digest(), 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The result of one bulk command: how many requests, how long, how many failed. */
  record Result(String command, int count, double seconds, double perSecond, long failed, String error) {
    static Result of(JsonNode json) {
      return new Result(json.path("command").asString(""), json.path("count").asInt(),
          json.path("seconds").asDouble(), json.path("perSecond").asDouble(), json.path("failed").asLong(),
          json.path("error").asString(""));
    }
  }

  /** Runs a bulk command ({@code create}, {@code edit}, {@code trickle}, {@code ceiling}) and waits for it. */
  Result run(String command, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(binary.toString(), command));
    cmd.addAll(credentials);
    cmd.addAll(List.of(args));
    Process process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    int exit = process.waitFor();
    if (out.isEmpty()) {
      throw new IllegalStateException("loadkit " + command + " exited " + exit + " without a result");
    }
    Result result = Result.of(JSON.readTree(out));
    if (exit != 0 || result.failed() > 0) {
      throw new IllegalStateException("loadkit " + command + ": " + result.failed() + " failed: " + result.error());
    }
    return result;
  }

  /** Starts the hook server on a free loopback port. */
  Hook startHook(Path workDir) throws IOException, InterruptedException {
    Path portFile = workDir.resolve("hook.port");
    Files.deleteIfExists(portFile);
    Process process = new ProcessBuilder(binary.toString(), "hook", "--listen", "127.0.0.1:0",
        "--port-file", portFile.toString())
        .redirectOutput(workDir.resolve("hook.log").toFile()).redirectErrorStream(true).start();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!Files.exists(portFile)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        process.destroyForcibly();
        throw new IllegalStateException("the loadkit hook did not start; see " + workDir.resolve("hook.log"));
      }
      Thread.sleep(20);
    }
    return new Hook(process, Integer.parseInt(Files.readString(portFile).trim()));
  }

  /** The running hook server. */
  static final class Hook implements AutoCloseable {
    private final Process process;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    Hook(Process process, int port) {
      this.process = process;
      this.port = port;
    }

    String url(String path) {
      return "http://127.0.0.1:" + port + path;
    }

    long pid() {
      return process.pid();
    }

    /** Clears its counters; with {@code latency}, edits stamped from now on are timed. */
    void reset(boolean latency) throws IOException, InterruptedException {
      http.send(HttpRequest.newBuilder(URI.create(url("/reset?latency=" + latency)))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
    }

    /** Calls, distinct parents seen, its own CPU seconds and the latency percentiles since the last reset. */
    JsonNode stats() throws IOException, InterruptedException {
      String body = http.send(HttpRequest.newBuilder(URI.create(url("/stats"))).GET().build(),
          HttpResponse.BodyHandlers.ofString()).body();
      return JSON.readTree(body);
    }

    @Override
    public void close() {
      process.destroy();
    }
  }
}
