package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.RecordSyncsAnnotation;
import dev.metareactor.engine.api.ShadowAnnotations;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.config.SyncRecording;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.http.HookEndpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Records a controller's syncs ({@code --record-syncs DIR} and {@code metareactor.dev/record-syncs: "true"}): one JSON
 * file per sync under {@code DIR/<kind>-<name>/}, named by time so that a listing is in order, holding what
 * {@code metareactor replay} needs to ask a hook the same again and compare:
 *
 * <pre>{@code
 * {"format": "metareactor.dev/sync-record/v1", "controller": {"kind", "name"}, "owned": "children",
 *  "kindFields": ["labels", ...], "object": {"namespace", "name", "about"}, "time", "result", "error",
 *  "exchanges": [{"request", "answer"}], "writes": [{"verb", "apiVersion", "resource", "namespace", "name", "result"}]}
 * }</pre>
 *
 * <p>Redacted before anything is written: the values of every Secret's {@code data} and {@code stringData} (the
 * observed ones too, which a request carries as raw JSON), the user info, query and fragment of every {@code url},
 * shadow hook URL and service hook {@code path} (a hook's credentials), and every object's {@code managedFields} and
 * {@code last-applied-configuration} annotations (kubectl's and dynamic apply's hold whole objects, a Secret's data
 * too). Files are written off the sync, on the
 * blocking scheduler; the directory holds at most {@code maxBytes}, the oldest files removed first. A file that cannot
 * be written is logged and skipped: recording never fails a sync.
 */
public final class SyncRecorder {

  /** The format of a record, its first field. */
  public static final String FORMAT = "metareactor.dev/sync-record/v1";
  /** What a redacted value is replaced with. */
  public static final String REDACTED = "<redacted>";
  private static final Logger LOG = LoggerFactory.getLogger(SyncRecorder.class);
  private static final AtomicLong SEQUENCE = new AtomicLong();

  private final Path dir;
  private final long maxBytes;
  private final Scheduler blocking;
  private final Clock clock;
  private final String kind;
  private final String name;
  /** The files written, oldest first, with their sizes; and their total. */
  private final Deque<Map.Entry<Path, Long>> files = new ArrayDeque<>();
  private long total;

  /**
   * The recorder of a controller's syncs: with {@code --record-syncs} when its object asks for it
   * ({@link RecordSyncsAnnotation}), else {@code null}. A directory that cannot be used is told to {@code problem}
   * and the controller runs unrecorded: recording never stops syncing.
   */
  static @Nullable SyncRecorder of(SyncRecording recording, KubeObject controllerObject, Scheduling scheduling,
      String kind, String name, Consumer<String> problem) {
    if (recording.dir().isEmpty() || !RecordSyncsAnnotation.enabled(controllerObject.annotations())) {
      return null;
    }
    try {
      return new SyncRecorder(recording.dir().get(), recording.maxBytesPerController(), scheduling.blocking(),
          scheduling.wallClock(), kind, name);
    } catch (UncheckedIOException e) {
      problem.accept("cannot record syncs: " + e.getMessage()
          + (e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")"));
      return null;
    }
  }

  /**
   * @param root {@code --record-syncs}' directory; this controller's files go to {@code <kind>-<name>} under it
   * @param maxBytes what the controller's directory may hold
   */
  public SyncRecorder(Path root, long maxBytes, Scheduler blocking, Clock clock, String kind, String name) {
    this.dir = root.resolve(kind.toLowerCase(Locale.ROOT) + "-" + name);
    this.maxBytes = maxBytes;
    this.blocking = Objects.requireNonNull(blocking, "blocking");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.kind = kind;
    this.name = name;
    try {
      Files.createDirectories(dir);
      try (Stream<Path> existing = Files.list(dir)) {
        existing.filter(file -> file.getFileName().toString().endsWith(".json")).sorted()
            .forEach(file -> remember(file, sizeOf(file)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot record syncs in " + dir, e);
    }
  }

  /**
   * Writes the record of one sync, in the background.
   *
   * @param owned the answer's field of owned objects ({@code children}, {@code attachments}, {@code outputs})
   * @param kindFields the kind's own answer fields
   */
  public void save(SyncKey key, SyncRecord record, Outcome outcome, @Nullable Throwable error, String owned,
      Set<String> kindFields) {
    if (record.exchanges().isEmpty() && record.writes().isEmpty()) {
      return; // nothing asked, nothing written: a parent that moved, a sync the fence stopped
    }
    Instant now = clock.instant();
    // Fixed width, so that the names sort as the syncs were recorded (an Instant's fraction varies in length).
    String file = String.format(Locale.ROOT, "%013d-%06d-", now.toEpochMilli(), SEQUENCE.incrementAndGet() % 1_000_000)
        + (key.namespace().isEmpty() ? "" : key.namespace() + "_") + key.name() + ".json";
    // The record is built, redacted and written on the blocking scheduler: the sync may end on an event loop, and
    // redaction reads every request whole again.
    Mono.fromRunnable(() -> write(dir.resolve(file), KubeJson.bytes(tree(key, record, outcome, error, owned,
            kindFields, now))))
        .subscribeOn(blocking)
        .subscribe(null, failure -> LOG.warn("{} {}: cannot record a sync of {} in {}: {}", kind, name, key, dir,
            failure.getMessage()));
  }

  private ObjectNode tree(SyncKey key, SyncRecord record, Outcome outcome, @Nullable Throwable error, String owned,
      Set<String> kindFields, Instant now) {
    ObjectNode tree = KubeJson.nodes().objectNode().put("format", FORMAT);
    tree.putObject("controller").put("kind", kind).put("name", name);
    tree.put("owned", owned);
    ArrayNode fields = tree.putArray("kindFields");
    kindFields.forEach(fields::add);
    tree.putObject("object").put("namespace", key.namespace()).put("name", key.name()).put("about", key.about());
    tree.put("time", now.toString());
    tree.put("result", outcome.kind().name().toLowerCase(Locale.ROOT));
    if (error != null) {
      tree.put("error", String.valueOf(error.getMessage()));
    }
    ArrayNode exchanges = tree.putArray("exchanges");
    for (SyncRecord.Exchange exchange : record.exchanges()) {
      ObjectNode recorded = exchanges.addObject();
      recorded.set("request", redacted(exchange.request()));
      recorded.set("answer", redacted(exchange.answer()));
    }
    ArrayNode writes = tree.putArray("writes");
    for (SyncRecord.Write write : record.writes()) {
      writes.addObject().put("verb", write.verb())
          .put("apiVersion", write.resource().group().isEmpty() ? write.resource().version()
              : write.resource().group() + "/" + write.resource().version())
          .put("resource", write.resource().resource()).put("namespace", write.namespace())
          .put("name", write.name()).put("result", write.result());
    }
    return tree;
  }

  private synchronized void write(Path file, byte[] bytes) {
    try {
      Path partial = file.resolveSibling(file.getFileName() + ".partial");
      Files.write(partial, bytes);
      Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE);
      remember(file, bytes.length);
      while (total > maxBytes && files.size() > 1) {
        Map.Entry<Path, Long> oldest = files.removeFirst();
        total -= oldest.getValue();
        Files.deleteIfExists(oldest.getKey());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void remember(Path file, long size) {
    files.addLast(Map.entry(file, size));
    total += size;
  }

  private static long sizeOf(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return 0;
    }
  }

  /**
   * A copy of {@code tree} without secrets: every Secret's {@code data} and {@code stringData} values, every
   * {@code url}'s user info, query and fragment, every object's {@code managedFields} and its
   * {@code last-applied-configuration} annotations (which hold whole objects).
   */
  public static JsonNode redacted(JsonNode tree) {
    // Read back from its bytes rather than copied: a request carries observed objects as raw JSON values, which a
    // copy keeps opaque and a walk of the tree would not see into.
    JsonNode copy = KubeJson.mapper().readTree(KubeJson.bytes(tree));
    redact(copy);
    return copy;
  }

  private static void redact(JsonNode node) {
    if (node instanceof ObjectNode object) {
      if ("Secret".equals(object.path("kind").asString("")) && object.path("apiVersion").asString("").equals("v1")) {
        for (String field : List.of("data", "stringData")) {
          if (object.get(field) instanceof ObjectNode values) {
            List.copyOf(values.propertyNames()).forEach(key -> values.put(key, REDACTED));
          }
        }
      }
      if (object.get("metadata") instanceof ObjectNode metadata) {
        metadata.remove("managedFields");
        if (metadata.get("annotations") instanceof ObjectNode annotations) {
          // Both hold a whole object as it was applied, a Secret's data too.
          annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
          annotations.remove("metacontroller.k8s.io/last-applied-configuration");
          for (String key : List.copyOf(annotations.propertyNames())) {
            if (key.startsWith(ShadowAnnotations.PREFIX) && annotations.get(key).isString()) {
              annotations.put(key, HookEndpoint.redact(annotations.get(key).asString()));
            }
          }
        }
      }
      for (String field : List.copyOf(object.propertyNames())) {
        JsonNode value = object.get(field);
        if (field.equals("url") && value.isString()) {
          object.put(field, HookEndpoint.redact(value.asString()));
        } else if (field.equals("path") && value.isString() && object.has("service")) {
          // A service hook's path may carry a query, as a URL may.
          object.put(field, value.asString().replaceFirst("[?#].*", ""));
        } else {
          redact(value);
        }
      }
    } else if (node instanceof ArrayNode array) {
      array.forEach(SyncRecorder::redact);
    }
  }
}
