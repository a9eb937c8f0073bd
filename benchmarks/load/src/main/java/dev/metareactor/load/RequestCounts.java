package dev.metareactor.load;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An engine's API requests by verb and resource, e.g. {@code create configmaps}, {@code update
 * loadparents.bench.metareactor.dev/status}, {@code get /apis}; a request that did not succeed is counted under its
 * status code too ({@code create configmaps (409)}).
 *
 * <p>Counted from the API server's audit log, which the local control plane writes for the engine's identity only
 * ({@code hack/local-cluster.sh}: user {@code metareactor-engine}, {@code engine.kubeconfig}): exactly the requests
 * the engine made, none of the harness's or the controller-manager's, whatever language the engine is written in.
 */
record RequestCounts(Map<String, Long> byRequest) {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  RequestCounts {
    byRequest = Map.copyOf(byRequest);
  }

  long total() {
    return byRequest.values().stream().mapToLong(Long::longValue).sum();
  }

  /** One write of the engine's: the object's name, and when the API server received it and when it answered. */
  record Write(String name, Instant received, Instant answered) {}

  /** The verbs that write. */
  private static final Set<String> WRITES = Set.of("create", "update", "patch");

  /** Where the audit log stood at one moment: the start of a phase. */
  record Mark(long offset, Instant time) {}

  /** The audit log of the local control plane. */
  static final class AuditLog {
    /** The API server flushes its batched audit events at least this often ({@code --audit-log-batch-max-wait}). */
    private static final long FLUSH_MILLIS = 1_500;

    private final Path file;

    AuditLog(Path file) {
      this.file = file;
    }

    Mark mark() throws IOException {
      return new Mark(Files.exists(file) ? Files.size(file) : 0, Instant.now());
    }

    /**
     * The requests received from {@code mark} until now. Waits for the API server's batch flush first, and counts
     * by the time each request was received, so that what comes after is not counted here.
     */
    RequestCounts since(Mark mark) throws IOException, InterruptedException {
      Map<String, Long> counts = new TreeMap<>();
      forEachSince(mark, event -> counts.merge(key(event), 1L, Long::sum));
      return new RequestCounts(counts);
    }

    /**
     * The writes (creates, updates, patches) received from {@code mark} until now, each with the name of the object
     * written and when the API server received and answered it, in the order of the log.
     */
    List<Write> writesSince(Mark mark) throws IOException, InterruptedException {
      List<Write> writes = new ArrayList<>();
      forEachSince(mark, event -> {
        String verb = event.path("verb").asString("");
        String name = event.path("objectRef").path("name").asString("");
        if (WRITES.contains(verb) && !name.isEmpty()) {
          Instant received = Instant.parse(event.path("requestReceivedTimestamp").asString());
          String answered = event.path("stageTimestamp").asString("");
          writes.add(new Write(name, received, answered.isEmpty() ? received : Instant.parse(answered)));
        }
      });
      return writes;
    }

    /**
     * Each request received from {@code mark} until now, once. Waits for the API server's batch flush first, and
     * goes by the time each request was received, so that what comes after is not included here.
     */
    private void forEachSince(Mark mark, Consumer<JsonNode> action) throws IOException, InterruptedException {
      Instant end = Instant.now();
      Thread.sleep(FLUSH_MILLIS);
      Set<String> seen = new HashSet<>();
      try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
        long offset = in.length() >= mark.offset() ? mark.offset() : 0; // rotated: the new file from the start
        in.seek(offset);
        byte[] rest = new byte[(int) (in.length() - offset)];
        in.readFully(rest);
        for (String line : new String(rest, StandardCharsets.UTF_8).split("\n")) {
          if (line.isBlank()) {
            continue;
          }
          JsonNode event = JSON.readTree(line);
          Instant received = Instant.parse(event.path("requestReceivedTimestamp").asString());
          if (received.isBefore(mark.time()) || received.isAfter(end) || !seen.add(event.path("auditID").asString())) {
            continue;
          }
          action.accept(event);
        }
      }
    }

    static String key(JsonNode event) {
      JsonNode ref = event.path("objectRef");
      String what;
      if (ref.isMissingNode() || ref.path("resource").asString("").isEmpty()) {
        String uri = event.path("requestURI").asString("");
        what = uri.contains("?") ? uri.substring(0, uri.indexOf('?')) : uri;
      } else {
        String group = ref.path("apiGroup").asString("");
        String sub = ref.path("subresource").asString("");
        what = ref.path("resource").asString() + (group.isEmpty() ? "" : "." + group)
            + (sub.isEmpty() ? "" : "/" + sub);
      }
      int code = event.path("responseStatus").path("code").asInt(200);
      return event.path("verb").asString("?") + " " + what + (code >= 300 && code != 0 ? " (" + code + ")" : "");
    }
  }
}
