package dev.metareactor.engine.preview;

import dev.metareactor.engine.controller.HookCall;
import dev.metareactor.engine.controller.Shadow;
import dev.metareactor.engine.controller.SyncRecorder;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.KubeJson;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntConsumer;
import java.util.stream.Stream;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * {@code metareactor replay --hook-url URL DIR}: every recorded sync under {@code DIR} ({@link SyncRecorder}'s files,
 * from {@code --record-syncs}) sent again, request by request, to a hook, and its answers compared with the recorded
 * ones as a shadow's are ({@link Shadow#difference}: the owned objects by type, namespace and name, the status, the
 * kind's own fields, {@code finalized}, {@code resyncAfterSeconds}): the answers that would now make different writes.
 * No cluster is needed, so a hook's own CI can replay a recorded directory committed as fixtures.
 *
 * <p>Exit codes as {@code metareactor preview}'s: 0 every answer is the same, 1 one differs, 2 a hook call failed or
 * a file is not a record.
 */
public final class Replay {

  /** One recorded sync replayed: {@code same}, {@code differs} (with the first difference) or {@code error}. */
  public record Result(Path file, String controller, String object, String result, String detail) {}

  /** How a difference names the two answers. */
  private static final Shadow.Sides SIDES = new Shadow.Sides("recorded", "replayed");

  private Replay() {
  }

  /**
   * Replays every {@code *.json} record under {@code dir} (in name order: the order they were recorded in).
   *
   * @param progress told the number of records done, after each
   */
  public static List<Result> run(Path dir, URI hook, Duration timeout, IntConsumer progress) throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(dir)) {
      files = walk.filter(file -> Files.isRegularFile(file) && file.getFileName().toString().endsWith(".json"))
          .sorted().toList();
    }
    if (files.isEmpty()) {
      throw new IllegalArgumentException("no recorded syncs (*.json) under " + dir);
    }
    HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build();
    List<Result> results = new ArrayList<>();
    for (Path file : files) {
      results.add(replay(http, dir.relativize(file), file, hook, timeout));
      progress.accept(results.size());
    }
    return results;
  }

  private static Result replay(HttpClient http, Path name, Path file, URI hook, Duration timeout) {
    JsonNode record;
    try {
      record = KubeJson.mapper().readTree(Files.readAllBytes(file));
    } catch (IOException | JacksonException e) {
      return new Result(name, "", "", "error", "cannot read it: " + e.getMessage());
    }
    String controller = record.path("controller").path("kind").asString("") + " "
        + record.path("controller").path("name").asString("");
    JsonNode object = record.path("object");
    String about = object.path("namespace").asString("").isEmpty() ? object.path("name").asString("")
        : object.path("namespace").asString("") + "/" + object.path("name").asString("");
    if (!SyncRecorder.FORMAT.equals(record.path("format").asString(""))) {
      return new Result(name, controller, about, "error", "not a sync record (format "
          + record.path("format").asString("none") + ")");
    }
    String owned = record.path("owned").asString("children");
    Set<String> kindFields = new LinkedHashSet<>();
    record.path("kindFields").forEach(field -> kindFields.add(field.asString()));
    List<Shadow.Exchange> recorded = new ArrayList<>();
    List<HookCall.Reply> replayed = new ArrayList<>();
    HookCaller.RootObject root = new HookCaller.RootObject("", object.path("namespace").asString(""),
        object.path("name").asString(""));
    try {
      for (JsonNode exchange : record.path("exchanges")) {
        recorded.add(new Shadow.Exchange(exchange.path("request"), root,
            reply(exchange.path("answer"), owned, kindFields)));
        // Redacted as the recorded answer was, so that a Secret's data compares as the record keeps it.
        replayed.add(reply(SyncRecorder.redacted(call(http, hook, exchange.path("request"), timeout)), owned,
            kindFields));
      }
    } catch (HookResponseException | IOException e) {
      return new Result(name, controller, about, "error", String.valueOf(e.getMessage()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(name, controller, about, "error", "interrupted");
    }
    if (recorded.isEmpty()) {
      return new Result(name, controller, about, "same", "no hook call recorded");
    }
    String difference = Shadow.difference(recorded, replayed, null, null, kindFields, SIDES);
    return new Result(name, controller, about, difference.isEmpty() ? "same" : "differs", difference);
  }

  private static HookCall.Reply reply(JsonNode body, String owned, Set<String> kindFields) {
    return new HookCall.Reply(SyncResponse.parse(body, owned, kindFields, SyncResponse.UnknownFields.LOOSE,
        field -> { }), body);
  }

  private static JsonNode call(HttpClient http, URI hook, JsonNode request, Duration timeout)
      throws IOException, InterruptedException {
    HttpResponse<byte[]> answer = http.send(HttpRequest.newBuilder(hook).timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(KubeJson.bytes(request))).build(),
        HttpResponse.BodyHandlers.ofByteArray());
    if (answer.statusCode() / 100 != 2) {
      throw new IOException("the hook answered HTTP " + answer.statusCode());
    }
    try {
      return KubeJson.mapper().readTree(answer.body());
    } catch (JacksonException e) {
      throw new IOException("the hook's answer is not JSON: " + e.getOriginalMessage());
    }
  }

  /** The exit code: 0 every answer the same, 1 one differs, 2 an error. */
  public static int exitCode(List<Result> results) {
    if (results.stream().anyMatch(result -> result.result().equals("error"))) {
      return PreviewReport.ERROR;
    }
    return results.stream().anyMatch(result -> result.result().equals("differs")) ? PreviewReport.WOULD_WRITE
        : PreviewReport.NOTHING;
  }

  /** The results as one tree: {@code {records: [{file, controller, object, result, difference}], summary}}. */
  public static ObjectNode tree(List<Result> results) {
    ObjectNode root = KubeJson.nodes().objectNode();
    ArrayNode records = root.putArray("records");
    for (Result result : results) {
      records.addObject().put("file", result.file().toString()).put("controller", result.controller())
          .put("object", result.object()).put("result", result.result()).put("difference", result.detail());
    }
    ObjectNode summary = root.putObject("summary");
    for (String kind : List.of("same", "differs", "error")) {
      summary.put(kind, results.stream().filter(result -> result.result().equals(kind)).count());
    }
    return root;
  }

  /** The results as {@code -o text|json|yaml} prints them. */
  public static String render(List<Result> results, String format) {
    Objects.requireNonNull(format, "format");
    return switch (format) {
      case "json" -> KubeJson.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(tree(results)) + "\n";
      case "yaml" -> YAMLMapper.builder().build().writeValueAsString(tree(results));
      default -> {
        StringBuilder text = new StringBuilder();
        for (Result result : results) {
          text.append(String.format("%-8s", result.result())).append(result.controller()).append(' ')
              .append(result.object()).append(" (").append(result.file()).append(')');
          if (!result.result().equals("same")) {
            text.append(": ").append(result.detail());
          }
          text.append('\n');
        }
        JsonNode summary = tree(results).path("summary");
        text.append(results.size()).append(" recorded syncs replayed: ").append(summary.path("same").asLong())
            .append(" same, ").append(summary.path("differs").asLong()).append(" differ, ")
            .append(summary.path("error").asLong()).append(" failed\n");
        yield text.toString();
      }
    };
  }
}
