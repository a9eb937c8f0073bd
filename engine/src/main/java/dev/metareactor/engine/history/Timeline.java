package dev.metareactor.engine.history;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import tools.jackson.databind.JsonNode;

/**
 * A parent's page of recent syncs ({@link SyncPages}) as {@code metareactor why} prints it: one line per sync, oldest
 * first,
 *
 * <pre>
 * 12:01:03.120 synced because ConfigMap default/x updated (related); waited 3 ms, hook 12 ms, wrote ConfigMap
 *     default/x-0 (update)
 * </pre>
 *
 * <p>and what it flags ({@link #findings}): a hot loop (the newest syncs in a row wrote nothing and did not fail, at a
 * rate of more than {@code hotLoopPerMinute} a minute: at least {@value #HOT_LOOP_SUSTAINED} of them, or
 * {@value #HOT_LOOP_MIN} spanning {@link #HOT_LOOP_SPAN} or more, so that the few syncs that settle a change, its
 * writes coming back, are not one), repeated failures (the last three syncs or more failed), and long waits in the
 * queue (a sync waited {@code longWait} or more between its first enqueue and its start).
 *
 * @param zone the zone the times are shown in
 * @param hotLoopPerMinute how many syncs a minute with nothing written make a hot loop
 * @param longWait how long a wait in the queue is flagged
 */
public record Timeline(ZoneId zone, int hotLoopPerMinute, Duration longWait) {

  /** How many failed syncs in a row are flagged. */
  public static final int FAILURES_IN_A_ROW = 3;
  /** How many syncs in a row with nothing written are needed before a rate is judged at all. */
  static final int HOT_LOOP_MIN = 5;
  /** How long {@link #HOT_LOOP_MIN} such syncs must span to be judged. */
  static final Duration HOT_LOOP_SPAN = Duration.ofSeconds(2);
  /** How many such syncs are judged whatever they span. */
  static final int HOT_LOOP_SUSTAINED = 8;

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS", Locale.ROOT);

  public Timeline {
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(longWait, "longWait");
    if (hotLoopPerMinute < 1) {
      throw new IllegalArgumentException("hotLoopPerMinute must be at least 1, got " + hotLoopPerMinute);
    }
  }

  /** The timeline of {@code page}: a heading, then one line per kept sync. */
  public String render(JsonNode page) {
    StringBuilder text = new StringBuilder();
    JsonNode parent = page.path("parent");
    String namespace = parent.path("namespace").asString("");
    text.append(page.path("controller").path("kind").asString("")).append('/')
        .append(page.path("controller").path("name").asString("")).append(' ')
        .append(namespace.isEmpty() ? "" : namespace + "/").append(parent.path("name").asString(""))
        .append(": ").append(page.path("count").asLong()).append(" syncs seen, ")
        .append(page.path("failures").asLong()).append(" failed; the last ").append(page.path("syncs").size())
        .append(":\n");
    for (JsonNode sync : page.path("syncs")) {
      text.append(line(sync)).append('\n');
    }
    return text.toString();
  }

  /** One sync's line. */
  public String line(JsonNode sync) {
    StringBuilder line = new StringBuilder(TIME.format(Instant.parse(sync.path("time").asString()).atZone(zone)))
        .append(" synced because ").append(causes(sync));
    line.append("; waited ").append(millis(sync.path("waitedMicros").asLong()));
    int calls = sync.path("hookCalls").asInt();
    if (calls == 0) {
      line.append(", no hook call");
    } else {
      line.append(", hook ").append(millis(sync.path("hookMicros").asLong()));
      if (calls > 1) {
        line.append(" (").append(calls).append(" calls)");
      }
      long bytes = sync.path("answerBytes").asLong();
      if (bytes > 0) {
        line.append(", answer ").append(bytes).append(" B");
      }
    }
    JsonNode writes = sync.path("writes");
    if (writes.isEmpty()) {
      line.append(", wrote nothing");
    } else {
      line.append(", wrote ");
      boolean first = true;
      for (JsonNode write : writes) {
        line.append(first ? "" : ", ").append(write.path("kind").asString()).append(' ')
            .append(object(write.path("namespace").asString(""), write.path("name").asString("")))
            .append(" (").append(write.path("verb").asString());
        String result = write.path("result").asString("2xx");
        line.append(result.equals("2xx") ? "" : ", " + result).append(')');
        first = false;
      }
      int leftOut = sync.path("writesLeftOut").asInt();
      if (leftOut > 0) {
        line.append(" and ").append(leftOut).append(" more");
      }
    }
    String outcome = sync.path("outcome").asString("");
    if (!outcome.equals("success")) {
      line.append("; ").append(outcome);
    }
    if (sync.has("error")) {
      line.append(": ").append(sync.path("error").asString());
    }
    return line.toString();
  }

  private static String causes(JsonNode sync) {
    List<String> causes = new ArrayList<>();
    for (JsonNode cause : sync.path("causes")) {
      causes.add(cause(cause));
    }
    if (causes.isEmpty()) {
      return "no recorded cause";
    }
    int leftOut = sync.path("causesLeftOut").asInt();
    return String.join(" and ", causes) + (leftOut > 0 ? " (and " + leftOut + " more)" : "");
  }

  /** {@code ConfigMap default/x updated (related)}, or the cause's own words when it names no object. */
  private static String cause(JsonNode cause) {
    if (!cause.has("kind")) {
      return cause.path("text").asString();
    }
    String change = cause.path("change").asString("none");
    String what = switch (cause.path("cause").asString("")) {
      case "child" -> "child";
      case "related" -> "related";
      case "map_input" -> "input";
      case "echo" -> "own write";
      default -> cause.path("cause").asString("");
    };
    return cause.path("kind").asString() + " " + object(cause.path("namespace").asString(""),
        cause.path("name").asString("")) + (change.equals("none") ? " changed" : " " + change) + " (" + what + ")";
  }

  private static String object(String namespace, String name) {
    return namespace.isEmpty() ? name : namespace + "/" + name;
  }

  private static String millis(long micros) {
    return micros < 10_000 ? String.format(Locale.ROOT, "%.1f ms", micros / 1000.0) : micros / 1000 + " ms";
  }

  /** What the kept syncs of {@code page} show that deserves a look; empty when nothing does. */
  public List<String> findings(JsonNode page) {
    List<JsonNode> syncs = new ArrayList<>();
    page.path("syncs").forEach(syncs::add);
    List<String> findings = new ArrayList<>();
    if (syncs.isEmpty()) {
      return findings;
    }
    hotLoop(syncs, findings);
    failures(syncs, findings);
    waits(syncs, findings);
    return findings;
  }

  /** The newest syncs in a row that wrote nothing and did not fail, judged as a rate over the time they span. */
  private void hotLoop(List<JsonNode> syncs, List<String> findings) {
    int idle = 0;
    Map<String, Integer> causes = new LinkedHashMap<>();
    for (int i = syncs.size() - 1; i >= 0; i--) {
      JsonNode sync = syncs.get(i);
      if (!sync.path("writes").isEmpty() || sync.path("writesLeftOut").asInt() > 0 || failed(sync)) {
        break;
      }
      idle++;
      causes.merge(causes(sync), 1, Integer::sum);
    }
    if (idle < HOT_LOOP_MIN) {
      return;
    }
    long first = time(syncs.get(syncs.size() - idle));
    long last = time(syncs.get(syncs.size() - 1));
    long span = Math.max(1, last - first);
    double perMinute = (idle - 1) * 60_000.0 / span;
    boolean judged = idle >= HOT_LOOP_SUSTAINED || span >= HOT_LOOP_SPAN.toMillis();
    if (judged && perMinute > hotLoopPerMinute) {
      String usual = causes.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
          .orElse("no recorded cause");
      findings.add(String.format(Locale.ROOT, "hot loop: the last %d syncs wrote nothing, %d within %.1f s (about "
          + "%.0f a minute, more than %d); most often because %s", idle, idle, span / 1000.0, perMinute,
          hotLoopPerMinute, usual));
    }
  }

  private static void failures(List<JsonNode> syncs, List<String> findings) {
    int failed = 0;
    for (int i = syncs.size() - 1; i >= 0 && failed(syncs.get(i)); i--) {
      failed++;
    }
    if (failed >= FAILURES_IN_A_ROW) {
      JsonNode last = syncs.get(syncs.size() - 1);
      findings.add("failing: the last " + failed + " syncs failed"
          + (last.has("error") ? ", the last with: " + last.path("error").asString() : ""));
    }
  }

  private void waits(List<JsonNode> syncs, List<String> findings) {
    long longest = 0;
    int slow = 0;
    for (JsonNode sync : syncs) {
      long waited = sync.path("waitedMicros").asLong();
      longest = Math.max(longest, waited);
      if (waited >= longWait.toNanos() / 1000) {
        slow++;
      }
    }
    if (slow > 0) {
      findings.add("long queue waits: " + slow + " of the last " + syncs.size() + " syncs waited " + millis(
          longWait.toNanos() / 1000) + " or more in the queue, the longest " + millis(longest)
          + " (the controller's workers were busy: see --workers and the queue depth metrics)");
    }
  }

  /** As {@link SyncEntry#failed}: a run told to come back later keeps its reason but did not fail. */
  private static boolean failed(JsonNode sync) {
    return sync.path("outcome").asString("").equals("failed");
  }

  private static long time(JsonNode sync) {
    return Instant.parse(sync.path("time").asString()).toEpochMilli();
  }
}
