package dev.metareactor.engine.history;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.queue.Trigger;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The ring of recent syncs as JSON pages, served read-only on the management (metrics) address:
 *
 * <ul>
 *   <li>{@code GET /debug/syncs/{kind}/{controller}/{namespace}/{name}}: one parent's kept syncs, oldest first
 *       ({@code kind} is {@code compositecontroller}, {@code decoratorcontroller} or {@code mapcontroller}; a
 *       cluster-scoped parent's {@code namespace} is {@value #CLUSTER}, which no namespace can be called);</li>
 *   <li>{@code GET /debug/syncs/{kind}/{controller}}: the controller's {@value #LISTED} busiest parents (most syncs in
 *       the last minute, of those kept) and its {@value #LISTED} most recently failing ones.</li>
 * </ul>
 *
 * <p>A page the ring has nothing for is a 404 with {@code {"error": "..."}}; the ring keeps no JSON body, so a page
 * holds names, figures and errors only.
 */
public final class SyncPages {

  /** The namespace segment of a cluster-scoped parent. */
  public static final String CLUSTER = "-";
  /** How many parents a controller's page lists, of each sort. */
  public static final int LISTED = 20;
  /** The format of a parent's page, its first field. */
  public static final String FORMAT = "metareactor.dev/syncs/v1";

  private static final Set<String> KINDS = Set.of("compositecontroller", "decoratorcontroller", "mapcontroller");

  private final SyncHistory history;
  private final Clock clock;

  public SyncPages(SyncHistory history, Clock clock) {
    this.history = Objects.requireNonNull(history, "history");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * A page and its HTTP status.
   *
   * @param status 200, 404 (nothing kept, an unknown path)
   * @param json the page
   */
  public record Page(int status, String json) {}

  /** The path of a parent's page, without a leading slash: {@code debug/syncs/compositecontroller/c/ns/name}. */
  public static String path(ParentRef parent) {
    return "debug/syncs/" + parent.kind() + "/" + parent.controller() + "/"
        + (parent.namespace().isEmpty() ? CLUSTER : parent.namespace()) + "/" + parent.name();
  }

  /** The page at {@code path} ({@code debug/syncs/...}, without a leading slash or a query). */
  public Page page(String path) {
    String[] segments = path.split("/", -1);
    if (segments.length < 4 || !segments[0].equals("debug") || !segments[1].equals("syncs")
        || !KINDS.contains(segments[2])) {
      return notFound("no such page: /" + path + " (/debug/syncs/{compositecontroller|decoratorcontroller|"
          + "mapcontroller}/{controller}[/{namespace or " + CLUSTER + "}/{name}])");
    }
    if (!history.on()) {
      return notFound("the engine keeps no recent syncs");
    }
    if (segments.length == 4) {
      return new Page(200, KubeJson.text(controller(segments[2], segments[3])));
    }
    if (segments.length != 6) {
      return notFound("no such page: /" + path);
    }
    ParentRef parent = new ParentRef(segments[2], segments[3], segments[4].equals(CLUSTER) ? "" : segments[4],
        segments[5]);
    SyncHistory.Syncs syncs = history.parent(parent);
    if (syncs == null) {
      return notFound("no sync of " + parent + " kept for " + parent.kind() + "/" + parent.controller()
          + " (never synced by this engine, or forgotten to keep the ring within its bytes)");
    }
    return new Page(200, KubeJson.text(parent(syncs)));
  }

  private static Page notFound(String error) {
    return new Page(404, KubeJson.text(KubeJson.nodes().objectNode().put("error", error)));
  }

  private ObjectNode controller(String kind, String controller) {
    long minuteAgo = clock.millis() - 60_000;
    List<SyncHistory.Syncs> parents = history.parents(kind, controller);
    ObjectNode page = KubeJson.nodes().objectNode().put("format", FORMAT);
    page.putObject("controller").put("kind", kind).put("name", controller);
    page.put("parents", parents.size());
    List<SyncHistory.Syncs> busiest = new ArrayList<>(parents);
    busiest.sort(SyncHistory.Syncs.busiest(minuteAgo));
    ArrayNode listed = page.putArray("busiest");
    busiest.stream().limit(LISTED).forEach(syncs -> listed.add(summary(syncs, minuteAgo)));
    ArrayNode failing = page.putArray("failing");
    parents.stream().filter(syncs -> syncs.lastFailureMillis() > 0)
        .sorted(Comparator.comparingLong(SyncHistory.Syncs::lastFailureMillis).reversed())
        .limit(LISTED).forEach(syncs -> failing.add(summary(syncs, minuteAgo)));
    return page;
  }

  private static ObjectNode summary(SyncHistory.Syncs syncs, long minuteAgo) {
    ObjectNode summary = KubeJson.nodes().objectNode();
    summary.put("namespace", syncs.parent().namespace()).put("name", syncs.parent().name())
        .put("path", "/" + path(syncs.parent()))
        .put("syncs", syncs.count()).put("syncsLastMinute", syncs.since(minuteAgo))
        .put("failures", syncs.failures());
    if (syncs.lastFailureMillis() > 0) {
      summary.put("lastFailure", Instant.ofEpochMilli(syncs.lastFailureMillis()).toString());
    }
    if (!syncs.syncs().isEmpty()) {
      SyncEntry last = syncs.syncs().get(syncs.syncs().size() - 1);
      summary.put("lastSync", Instant.ofEpochMilli(last.startedAtMillis()).toString())
          .put("lastOutcome", last.outcome());
      if (last.error() != null) {
        summary.put("lastError", last.error());
      }
    }
    return summary;
  }

  /** A parent's page. */
  static ObjectNode parent(SyncHistory.Syncs syncs) {
    ObjectNode page = KubeJson.nodes().objectNode().put("format", FORMAT);
    ParentRef parent = syncs.parent();
    page.putObject("controller").put("kind", parent.kind()).put("name", parent.controller());
    page.putObject("parent").put("namespace", parent.namespace()).put("name", parent.name());
    page.put("count", syncs.count()).put("failures", syncs.failures());
    ArrayNode list = page.putArray("syncs");
    for (SyncEntry sync : syncs.syncs()) {
      ObjectNode entry = list.addObject();
      entry.put("time", Instant.ofEpochMilli(sync.startedAtMillis()).toString());
      ArrayNode causes = entry.putArray("causes");
      for (Trigger trigger : sync.causes()) {
        ObjectNode cause = causes.addObject().put("cause", trigger.cause().name().toLowerCase(Locale.ROOT))
            .put("text", trigger.toString());
        if (!trigger.kind().isEmpty() || !trigger.name().isEmpty()) {
          cause.put("kind", trigger.kind()).put("namespace", trigger.namespace()).put("name", trigger.name())
              .put("change", trigger.change().name().toLowerCase(Locale.ROOT));
        }
      }
      entry.put("causesLeftOut", sync.causesLeftOut());
      entry.put("waitedMicros", sync.waitedMicros());
      entry.put("hookCalls", sync.hookCalls()).put("hookMicros", sync.hookMicros())
          .put("answerBytes", sync.answerBytes());
      ArrayNode writes = entry.putArray("writes");
      for (SyncEntry.Write write : sync.writes()) {
        writes.addObject().put("verb", write.verb()).put("kind", write.kind()).put("namespace", write.namespace())
            .put("name", write.name()).put("result", write.result());
      }
      entry.put("writesLeftOut", sync.writesLeftOut());
      entry.put("outcome", sync.outcome());
      String error = sync.error();
      if (error != null) {
        entry.put("error", error);
      }
    }
    return page;
  }
}
