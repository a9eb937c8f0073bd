package dev.metareactor.engine.controller.map;

import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ParentEvents;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.StatusWriter;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A MapController parent's status, counted by the engine (the map hook returns none) and written once per burst:
 *
 * <pre>{@code
 * status:
 *   observedGeneration: 3
 *   inputs:  {persistentvolumeclaims: {total: 20}}
 *   outputs: {volumesnapshots: {total: 100, ready: 97}}   # per condition type found True, in lower camel case
 * }</pre>
 *
 * <p>Every sync of one of the parent's inputs, and every status change of one of its outputs, says the parent
 * {@link #changed}. The count runs once the parent has been quiet for {@link #QUIET} (and at the latest
 * {@link #AT_MOST} after the first change), from the informer caches, and is written as every kind's status is
 * ({@link StatusWriter}: only when it differs). So a burst of 1,000 map calls costs one status write, not 1,000; a
 * long one (a converge of 15 s) one every {@link #AT_MOST}, so the status still shows progress. A failed write is
 * logged and counted again after {@link #QUIET}, the wait doubled with each failure in a row up to
 * {@link #RETRY_AT_MOST}; but a status the API server refuses (its CRD's schema) is the same again until something
 * changes: it is reported (a {@code SyncError} Warning on the parent and a log line) and counted again at the
 * parent's next change. A parent that is gone is forgotten. Nothing is counted before the
 * controller's caches have synced: the events of the informers' first lists say parents changed while those lists
 * are still arriving, and a count then would write a partial status (a restarted engine rewriting a converged
 * parent's status twice).
 */
final class MapStatus implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MapStatus.class);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  /** How long a parent must be quiet before its status is counted. */
  static final Duration QUIET = Duration.ofMillis(300);
  /** The longest a changed status waits while changes keep coming. */
  static final Duration AT_MOST = Duration.ofSeconds(2);
  /**
   * The longest wait before a failed write is counted again: the wait doubles from {@link #QUIET} with each failure
   * in a row ({@link #retryAfter}), so an API server that is down is not asked again every 300 ms per parent.
   */
  static final Duration RETRY_AT_MOST = Duration.ofSeconds(30);

  /** A parent with a count pending: when the first and the last change came. */
  private static final class Pending {
    final long first;
    long last;
    @Nullable Disposable timer;

    Pending(long now) {
      this.first = now;
      this.last = now;
    }
  }

  private final String controller;
  private final SyncedResource parents;
  private final List<ApiResource> inputs;
  private final Function<KubeObject, Map<ApiResource, Integer>> inputCounts;
  private final List<ChildType> outputs;
  private final Scheduler scheduler;
  private final LongSupplier nanoTime;
  private final BooleanSupplier cachesSynced;
  private final Map<ParentKey, Pending> pending = new ConcurrentHashMap<>();
  /** By parent: its writes that failed in a row; removed by one that succeeds, and with the parent. */
  private final Map<ParentKey, Integer> failures = new ConcurrentHashMap<>();
  private final StatusWriter writer;
  private final ParentEvents events;
  private volatile boolean closed;

  /**
   * @param controller {@code MapController <name>}, for log lines
   * @param inputCounts how many inputs of each input resource a parent selects
   * @param events where a status the API server refuses is reported
   * @param cachesSynced whether the parent, input and output caches have synced (counts wait until they have)
   */
  MapStatus(String controller, SyncedResource parents, List<ApiResource> inputs,
      Function<KubeObject, Map<ApiResource, Integer>> inputCounts,
      List<ChildType> outputs, ObjectApi api, ParentEvents events, Scheduler scheduler, LongSupplier nanoTime,
      BooleanSupplier cachesSynced) {
    this.controller = Objects.requireNonNull(controller, "controller");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.inputs = List.copyOf(inputs);
    this.inputCounts = Objects.requireNonNull(inputCounts, "inputCounts");
    this.outputs = List.copyOf(outputs);
    this.writer = new StatusWriter(api);
    this.events = Objects.requireNonNull(events, "events");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.cachesSynced = Objects.requireNonNull(cachesSynced, "cachesSynced");
  }

  /** Something the parent's status counts may have changed; any thread, never blocks. */
  void changed(ParentKey parent) {
    if (closed) {
      return;
    }
    long now = nanoTime.getAsLong();
    pending.compute(parent, (key, waiting) -> {
      if (waiting != null) {
        waiting.last = now;
        return waiting;
      }
      Pending started = new Pending(now);
      started.timer = scheduler.schedule(() -> due(key), QUIET.toNanos(), TimeUnit.NANOSECONDS);
      return started;
    });
  }

  /** The parent is gone: nothing more to write for it. */
  void forget(ParentKey parent) {
    failures.remove(parent);
    Pending waiting = pending.remove(parent);
    if (waiting != null && waiting.timer != null) {
      waiting.timer.dispose();
    }
  }

  private void due(ParentKey parent) {
    long now = nanoTime.getAsLong();
    boolean[] count = {false};
    pending.computeIfPresent(parent, (key, waiting) -> {
      long quietFor = now - waiting.last;
      long waitedFor = now - waiting.first;
      if (!cachesSynced.getAsBoolean()) {
        waiting.timer = scheduler.schedule(() -> due(key), QUIET.toNanos(), TimeUnit.NANOSECONDS);
        return waiting;
      }
      if (quietFor < QUIET.toNanos() && waitedFor < AT_MOST.toNanos()) {
        long delay = Math.min(QUIET.toNanos() - quietFor, AT_MOST.toNanos() - waitedFor);
        waiting.timer = scheduler.schedule(() -> due(key), delay, TimeUnit.NANOSECONDS);
        return waiting;
      }
      count[0] = true;
      return null;
    });
    if (count[0] && !closed) {
      write(parent).subscribe(null, error -> failed(parent, error), () -> failures.remove(parent));
    }
  }

  /** Counts the parent again once {@link #retryAfter} its failures in a row ({@link #changed} waits the quiet part). */
  private void failed(ParentKey parent, Throwable error) {
    Duration after = retryAfter(failures.merge(parent, 1, Integer::sum));
    LOG.warn("{}: parent {}: {}; counting again in {} ms", controller, parent, error.getMessage(), after.toMillis());
    scheduler.schedule(() -> changed(parent), after.minus(QUIET).toNanos(), TimeUnit.NANOSECONDS);
  }

  /** How long after its {@code inARow}-th failed write in a row a parent's status is written again. */
  static Duration retryAfter(int inARow) {
    long nanos = QUIET.toNanos() << Math.min(Math.max(inARow - 1, 0), 16);
    return Duration.ofNanos(Math.min(nanos, RETRY_AT_MOST.toNanos()));
  }

  private Mono<Void> write(ParentKey key) {
    Optional<KubeObject> found = parents.responsible(key.namespace(), key.name());
    if (found.isEmpty()) {
      forget(key);
      return Mono.empty();
    }
    KubeObject parent = found.get();
    return writer.write(parents.resource(), parent, parent.toTree().get("status"), count(parent))
        .onErrorResume(StatusWriter.RefusedStatusException.class, refused -> {
          LOG.warn("{}: parent {}: {}; written again when it changes", controller, key, refused.getMessage());
          events.record(parent, EventRecorder.Type.Warning, "SyncError", "Sync error: " + refused.getMessage());
          return Mono.empty();
        })
        .then();
  }

  /** The status as the caches show it now. */
  ObjectNode count(KubeObject parent) {
    ObjectNode status = NODES.objectNode();
    status.put("observedGeneration", parent.generation());
    ObjectNode inputCounts = status.putObject("inputs");
    Map<ApiResource, Integer> selected = this.inputCounts.apply(parent);
    for (ApiResource resource : inputs) {
      inputCounts.putObject(resource.resource()).put("total", selected.getOrDefault(resource, 0));
    }
    ObjectNode outputCounts = status.putObject("outputs");
    for (ChildType type : outputs) {
      Map<String, Integer> conditions = new TreeMap<>();
      int total = 0;
      for (KubeObject output : type.informer().controlledBy(parent.storedUid())) {
        if (output.labels().containsKey(MapSync.MAP_KEY_LABEL)) {
          total++;
          trueConditions(output).forEach(condition -> conditions.merge(condition, 1, Integer::sum));
        }
      }
      ObjectNode counts = outputCounts.putObject(type.resource().resource()).put("total", total);
      conditions.forEach(counts::put);
    }
    return status;
  }

  /** The types of the output's {@code status.conditions} that are True, in lower camel case ({@code Ready}: ready). */
  private static List<String> trueConditions(KubeObject output) {
    JsonNode conditions = output.toTree().path("status").path("conditions");
    List<String> found = new ArrayList<>();
    for (JsonNode condition : conditions) {
      String type = condition.path("type").asString("");
      if (!type.isEmpty() && condition.path("status").asString("").equals("True") && !type.equals("total")) {
        found.add(Character.toLowerCase(type.charAt(0)) + type.substring(1));
      }
    }
    return found;
  }

  @Override
  public void close() {
    closed = true;
    pending.keySet().forEach(this::forget);
  }
}
