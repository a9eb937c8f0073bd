package dev.metareactor.engine.preview;

import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.queue.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLWriteFeature;

/**
 * A preview's result as {@code metareactor preview} prints it, and its exit code.
 *
 * <ul>
 *   <li>{@code json} and {@code yaml}: one document, {@code {controller, parents: [{kind, apiVersion, namespace,
 *   name, result, writes: [{verb, apiVersion, kind, namespace, name, dryRun, changes, diff, refused}], events}],
 *   summary}}; {@code diff} is the JSON merge patch of the change (the whole object for a create).</li>
 *   <li>{@code text}: per parent a line, then per write a line and the change as a unified diff of the object's
 *   YAML (coloured on a terminal), then a summary.</li>
 * </ul>
 *
 * <p>Exit codes, for pipelines that gate on a preview: {@value #NOTHING} when no parent would write anything,
 * {@value #WOULD_WRITE} when one would, {@value #ERROR} when a sync failed (or the preview could not run).
 */
public final class PreviewReport {

  /** Nothing would be written. */
  public static final int NOTHING = 0;
  /** Something would be written. */
  public static final int WOULD_WRITE = 1;
  /** A sync failed, or the preview could not run. */
  public static final int ERROR = 2;

  private static final String RED = "\u001b[31m";
  private static final String GREEN = "\u001b[32m";
  private static final String CYAN = "\u001b[36m";
  private static final String BOLD = "\u001b[1m";
  private static final String RESET = "\u001b[0m";
  /** Lines of context around a change in a unified diff. */
  private static final int CONTEXT = 3;
  /** YAML as people write it: strings unquoted where YAML allows, long ones on one line. */
  private static final YAMLMapper YAML = YAMLMapper.builder().enable(YAMLWriteFeature.MINIMIZE_QUOTES)
      .disable(YAMLWriteFeature.SPLIT_LINES).build();

  private PreviewReport() {
  }

  /** The exit code of {@code result}. */
  public static int exitCode(Preview.Result result) {
    if (result.parents().stream().anyMatch(Preview.ParentResult::failed)) {
      return ERROR;
    }
    return result.parents().stream().anyMatch(Preview.ParentResult::changes) ? WOULD_WRITE : NOTHING;
  }

  /** {@code result} as one JSON tree. */
  public static ObjectNode tree(Preview.Result result) {
    ObjectNode root = KubeJson.nodes().objectNode();
    root.putObject("controller").put("kind", result.kind()).put("name", result.name());
    ArrayNode parents = root.putArray("parents");
    for (Preview.ParentResult parent : result.parents()) {
      ObjectNode node = parents.addObject();
      if (parent.object() != null) {
        node.put("apiVersion", parent.object().apiVersion()).put("kind", parent.object().kind());
      }
      node.put("namespace", parent.key().namespace()).put("name", parent.key().name());
      if (!about(parent.key()).isEmpty()) {
        node.put("about", about(parent.key()));
      }
      node.put("result", result(parent.outcome()));
      if (parent.failure() != null) {
        node.put("error", parent.failure());
      }
      ArrayNode writes = node.putArray("writes");
      for (PlannedWrite write : parent.writes()) {
        ObjectNode w = writes.addObject()
            .put("verb", write.verb().label())
            .put("apiVersion", apiVersion(write.resource()))
            .put("kind", write.resource().kind())
            .put("namespace", write.namespace())
            .put("name", write.name())
            .put("dryRun", true)
            .put("changes", write.changes());
        if (write.diff() != null) {
          w.set("diff", write.diff());
        }
        if (write.refusal() != null) {
          w.put("refused", write.refusal());
        }
      }
      ArrayNode events = node.putArray("events");
      parent.events().forEach(event -> events.addObject().put("type", event.type()).put("reason", event.reason())
          .put("message", event.message()));
    }
    ObjectNode summary = root.putObject("summary");
    summary.put("responsible", result.responsible());
    summary.put("synced", result.parents().size());
    summary.put("wouldChange", result.parents().stream().filter(Preview.ParentResult::changes).count());
    summary.put("failed", result.parents().stream().filter(Preview.ParentResult::failed).count());
    ObjectNode byVerb = summary.putObject("writes");
    writesByVerbAndKind(result).forEach(byVerb::put);
    return root;
  }

  /** {@code result} as {@code -o json}. */
  public static String json(Preview.Result result) {
    return KubeJson.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(tree(result)) + "\n";
  }

  /** {@code result} as {@code -o yaml}. */
  public static String yaml(Preview.Result result) {
    return YAML.writeValueAsString(tree(result));
  }

  /** {@code result} as {@code -o text}; with {@code color}, ANSI colours. */
  public static String text(Preview.Result result, boolean color) {
    StringBuilder out = new StringBuilder();
    for (Preview.ParentResult parent : result.parents()) {
      String kind = parent.object() != null ? parent.object().kind() : "object";
      out.append(style(BOLD, color)).append(kind).append(' ').append(Preview.named(parent.key()))
          .append(about(parent.key()).isEmpty() ? "" : " (" + about(parent.key()) + ")").append(style(RESET, color))
          .append(": ");
      long changing = parent.writes().stream().filter(PlannedWrite::changes).count();
      // The failure once: on this line, unless a Warning below (the SyncError the engine would record) says it.
      String failure = parent.failure();
      boolean toldBelow = failure != null && parent.events().stream()
          .anyMatch(event -> event.type().equals("Warning") && event.message().contains(failure));
      String how = parent.outcome().kind() == Outcome.Kind.RETRY_AFTER
          ? "the hook asked to be called later: not previewed"
          : parent.failed() ? "sync failed" + (failure != null && !toldBelow ? ": " + failure : "")
          : changing == 0 ? "no change" : changing + " write" + (changing == 1 ? "" : "s");
      out.append(how).append('\n');
      for (PreviewApi.RecordedEvent event : parent.events()) {
        if (event.type().equals("Warning")) {
          out.append("  ").append(style(RED, color)).append(event.reason()).append(": ").append(event.message())
              .append(style(RESET, color)).append('\n');
        }
      }
      for (PlannedWrite write : parent.writes()) {
        out.append("  ").append(style(CYAN, color)).append(String.format(Locale.ROOT, "%-8s", write.verb().label()))
            .append(style(RESET, color)).append(apiVersion(write.resource())).append(' ')
            .append(write.resource().kind()).append(' ').append(write.objectName());
        if (write.refusal() != null) {
          out.append("  (the API server would refuse it: ").append(write.refusal()).append(')');
        } else if (!write.changes()) {
          out.append("  (no change)");
        }
        out.append('\n');
        if (write.refusal() == null && write.changes() && write.verb() != PlannedWrite.Verb.DELETE) {
          out.append(unifiedDiff(lines(MergeDiff.comparable(write.before(), false)),
              lines(MergeDiff.comparable(write.after(), write.before() == null)), color));
        }
      }
    }
    out.append(style(BOLD, color)).append(summaryLine(result)).append(style(RESET, color)).append('\n');
    return out.toString();
  }

  /**
   * {@code 2 of 3 parents would change (2 create ConfigMap, 1 status Hello); 1 failed}; a MapController's unit is an
   * input of a parent: {@code 1 of 2 inputs of 1 parent would change (...)}.
   */
  static String summaryLine(Preview.Result result) {
    long changing = result.parents().stream().filter(Preview.ParentResult::changes).count();
    long failed = result.parents().stream().filter(Preview.ParentResult::failed).count();
    int units = result.parents().size();
    boolean inputs = result.parents().stream().anyMatch(parent -> !about(parent.key()).isEmpty());
    StringBuilder line = new StringBuilder(result.kind()).append(' ').append(result.name()).append(": ")
        .append(changing).append(" of ").append(count(units, inputs ? "input" : "parent"));
    if (inputs) {
      long parents = result.parents().stream()
          .map(parent -> parent.key().namespace() + "/" + parent.key().name()).distinct().count();
      line.append(" of ").append(count(parents, "parent"));
    }
    line.append(" would change");
    Map<String, Integer> writes = writesByVerbAndKind(result);
    if (!writes.isEmpty()) {
      line.append(" (");
      List<String> parts = new ArrayList<>();
      writes.forEach((what, count) -> parts.add(count + " " + what));
      line.append(String.join(", ", parts)).append(')');
    }
    if (failed > 0) {
      line.append("; ").append(failed).append(" failed");
    }
    return line.toString();
  }

  private static String count(long count, String noun) {
    return count + " " + noun + (count == 1 ? "" : "s");
  }

  private static Map<String, Integer> writesByVerbAndKind(Preview.Result result) {
    Map<String, Integer> counts = new TreeMap<>();
    result.parents().stream().flatMap(parent -> parent.writes().stream()).filter(PlannedWrite::changes)
        .forEach(write -> counts.merge(write.verb().label() + " " + write.resource().kind(), 1, Integer::sum));
    return counts;
  }

  private static String result(Outcome outcome) {
    return switch (outcome.kind()) {
      case SUCCESS -> "synced";
      case RETRY_AFTER -> "retry";
      case FAILED, CANCELLED -> "failed";
    };
  }

  /** What a key says beyond its object ({@code input configmaps/ns/x} for a MapController's), without the colon. */
  private static String about(OneShot.Unit key) {
    String about = key.about().strip();
    return about.endsWith(":") ? about.substring(0, about.length() - 1) : about;
  }

  private static String apiVersion(ApiResource resource) {
    return resource.group().isEmpty() ? resource.version() : resource.group() + "/" + resource.version();
  }

  private static String style(String code, boolean color) {
    return color ? code : "";
  }

  private static List<String> lines(@Nullable JsonNode object) {
    if (object == null) {
      return List.of();
    }
    String yaml = YAML.writeValueAsString(object);
    List<String> lines = new ArrayList<>(yaml.lines().toList());
    if (!lines.isEmpty() && lines.get(0).equals("---")) {
      lines.remove(0);
    }
    return lines;
  }

  /**
   * A unified diff of two texts' lines with {@value #CONTEXT} lines of context, each line indented by four spaces;
   * the longest common subsequence decides what stayed (objects are small: quadratic is fine).
   */
  static String unifiedDiff(List<String> before, List<String> after, boolean color) {
    int n = before.size();
    int m = after.size();
    int[][] common = new int[n + 1][m + 1];
    for (int i = n - 1; i >= 0; i--) {
      for (int j = m - 1; j >= 0; j--) {
        common[i][j] = before.get(i).equals(after.get(j)) ? common[i + 1][j + 1] + 1
            : Math.max(common[i + 1][j], common[i][j + 1]);
      }
    }
    // The edit script: ' ' kept, '-' removed, '+' added.
    StringBuilder ops = new StringBuilder();
    List<String> texts = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && before.get(i).equals(after.get(j))) {
        ops.append(' ');
        texts.add(before.get(i++));
        j++;
      } else if (i < n && (j == m || common[i + 1][j] >= common[i][j + 1])) {
        ops.append('-'); // what goes before what comes, as diff prints them
        texts.add(before.get(i++));
      } else {
        ops.append('+');
        texts.add(after.get(j++));
      }
    }
    StringBuilder out = new StringBuilder();
    int last = -1;
    for (int k = 0; k < ops.length(); k++) {
      boolean near = false;
      for (int d = Math.max(0, k - CONTEXT); d <= Math.min(ops.length() - 1, k + CONTEXT) && !near; d++) {
        near = ops.charAt(d) != ' ';
      }
      if (!near) {
        continue;
      }
      if (last >= 0 && k > last + 1) {
        out.append("    ").append(style(CYAN, color)).append("@@").append(style(RESET, color)).append('\n');
      }
      char op = ops.charAt(k);
      String line = op + " " + texts.get(k);
      out.append("    ").append(op == '+' ? style(GREEN, color) + line + style(RESET, color)
          : op == '-' ? style(RED, color) + line + style(RESET, color) : line).append('\n');
      last = k;
    }
    return out.toString();
  }
}
