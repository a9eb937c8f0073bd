package dev.metareactor.http.metrics;

import dev.metareactor.http.metrics.Metric.Type;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Every metric the engine exports, declared once: its name, type, labels and help. The code that registers one of
 * Metareactor's own starts from its constant here ({@code MetricCatalogue.WORKQUEUE_ADDS.counter()...}); the
 * metrics of the JVM and Resilience4j, which libraries register, are declared here too, so that this is the whole
 * list. {@code docs/metrics.md} shows it to users; {@code MetricCatalogueTest} holds the page, the Grafana dashboard
 * and what a registry exports to this class, and {@code GrafanaDashboardIT} a running engine's {@code /metrics}.
 *
 * <p>Names and labels are a contract: dashboards and alerts select on them, and those borrowed from client-go
 * ({@code workqueue_*}), controller-runtime ({@code controller_runtime_*}) and Metacontroller
 * ({@code metacontroller_<hook>_*}) keep theirs so that the ones written for those work as they are. Rename none.
 */
public final class MetricCatalogue {

  // Before the constants: each declaration adds itself, in the order of the file.
  private static final List<Metric> OWN = new ArrayList<>();

  private static final List<String> QUEUE = List.of("name", "controller");
  private static final List<String> CONTROLLER = List.of("controller");
  private static final List<String> HOOK = List.of("url", "controller_name", "controller_type");
  private static final List<String> INFORMER = List.of("resource", "content", "selector", "namespace");
  private static final List<String> SHARDED = List.of("controller", "kind");

  // client-go's work queue metrics, one queue per controller.

  public static final Metric WORKQUEUE_ADDS = own(Type.COUNTER, "workqueue.adds", null, QUEUE,
      "Keys added to the work queue; adding a key that is already waiting is not counted");
  public static final Metric WORKQUEUE_RETRIES = own(Type.COUNTER, "workqueue.retries", null, QUEUE,
      "Delayed adds to the work queue: retries of failed runs, retry-after and resync-after");
  public static final Metric WORKQUEUE_DEPTH = own(Type.GAUGE, "workqueue.depth", null, QUEUE,
      "Keys waiting to run");
  public static final Metric WORKQUEUE_QUEUE_DURATION = own(Type.HISTOGRAM, "workqueue.queue.duration", null,
      QUEUE, "How long a key waited from its add until a worker took it");
  public static final Metric WORKQUEUE_WORK_DURATION = own(Type.HISTOGRAM, "workqueue.work.duration", null, QUEUE,
      "How long one run of a key took");
  public static final Metric WORKQUEUE_UNFINISHED_WORK = own(Type.GAUGE, "workqueue.unfinished.work", "seconds",
      QUEUE, "Sum of how long the runs in progress have been running");
  public static final Metric WORKQUEUE_LONGEST_RUNNING_PROCESSOR = own(Type.GAUGE,
      "workqueue.longest.running.processor", "seconds", QUEUE,
      "How long the longest run in progress has been running");
  public static final Metric QUEUE_LANE_WAIT = own(Type.HISTOGRAM, "metareactor.queue.wait", null,
      List.of("name", "controller", "lane"), "How long a key waited in the lane a worker took it "
          + "from: fresh (since a change came for it) or background (since its add: resyncs, retries, echoes)");

  // controller-runtime's reconcile metrics: a sync is a reconcile.

  public static final Metric RECONCILE = own(Type.COUNTER, "controller_runtime.reconcile", null,
      List.of("controller", "result"), "Syncs, by how they ended");
  public static final Metric RECONCILE_ERRORS = own(Type.COUNTER, "controller_runtime.reconcile.errors", null,
      CONTROLLER, "Syncs that failed");
  public static final Metric RECONCILE_TIME = own(Type.HISTOGRAM, "controller_runtime.reconcile.time", null,
      CONTROLLER, "How long a sync took");
  public static final Metric ACTIVE_WORKERS = own(Type.GAUGE, "controller_runtime.active.workers", null,
      CONTROLLER, "Syncs running now");
  public static final Metric MAX_CONCURRENT_RECONCILES = own(Type.GAUGE,
      "controller_runtime.max.concurrent.reconciles", null, CONTROLLER, "The controller's workers");
  public static final Metric CHILD_CONFLICTS = own(Type.COUNTER, "metareactor.child.conflicts", null,
      List.of("controller", "resource", "holder"),
      "Desired children whose name an object holds that the parent does not observe");
  public static final Metric SHADOW_SYNCS = own(Type.COUNTER, "metareactor.shadow.syncs", null,
      List.of("controller", "result"),
      "Syncs whose answer was compared with a shadow hook's, by result: same, differs, error, skipped");
  public static final Metric HOT_LOOPS = own(Type.COUNTER, "metareactor.hot.loops", null, List.of("controller"),
      "Parents found making the same write again and again, each time their syncs were held back for it");

  // Metacontroller's hook metrics, one set per hook type: Metric.forHook names them.

  public static final Metric HOOK_REQUESTS = own(Type.COUNTER, "metacontroller.<hook>.requests", null,
      with(HOOK, "code", "method"), "A counter for requests from the wrapped client.");
  public static final Metric HOOK_REQUEST_DURATION = own(Type.HISTOGRAM,
      "metacontroller.<hook>.request.duration.histogram", null, with(HOOK, "method"),
      "A histogram of request latencies.");
  public static final Metric HOOK_IN_FLIGHT_REQUESTS = own(Type.GAUGE, "metacontroller.<hook>.in.flight.requests",
      null, HOOK, "A gauge of in-flight requests.");
  public static final Metric HOOK_RETRIES = own(Type.COUNTER, "metacontroller.<hook>.retries", null, HOOK,
      "Requests sent again after a transient failure.");
  public static final Metric HOOK_ETAG_CACHE_LOOKUPS = own(Type.COUNTER, "metacontroller.<hook>.etag.cache.lookups",
      null, with(HOOK, "result"),
      "ETag cache lookups: hit when the hook answered 304/412 and the cached body was used.");

  // The memory of hook answers in flight.

  public static final Metric HOOK_ANSWERS = own(Type.GAUGE, "metareactor.hook.answers", "bytes", List.of(),
      "Estimated heap taken by hook answers in flight (bodies being read, parsed trees in use)");
  public static final Metric HOOK_ANSWERS_LIMIT = own(Type.GAUGE, "metareactor.hook.answers.limit", "bytes",
      List.of(), "The budget of hook answers in flight, beyond the first 256 KiB of each");
  public static final Metric HOOK_ANSWERS_REFUSED = own(Type.COUNTER, "metareactor.hook.answers.refused", null,
      List.of(), "Hook answers failed because the budget of answers in flight could not hold them");

  // The Kubernetes API and the informers' caches.

  public static final Metric API_REQUESTS = own(Type.COUNTER, "metareactor.api.requests", null,
      List.of("verb", "resource", "code"),
      "Kubernetes API requests made by the engine (informer lists and watches excluded)");
  public static final Metric INFORMER_OBJECTS = own(Type.GAUGE, "metareactor.informer.objects", null, INFORMER,
      "Objects in the informer's cache");
  public static final Metric INFORMER_EXPIRED_WATCHES = own(Type.COUNTER, "metareactor.informer.expired.watches",
      null, INFORMER, "Watches the API server ended with 410 Gone, each followed by a relist");
  public static final Metric INFORMER_SILENT_WATCHES = own(Type.COUNTER, "metareactor.informer.silent.watches",
      null, INFORMER, "Watches given up after 3 minutes without an event or bookmark, each watched again");

  // Sharding (--sharding): every replica's, then the sharder's (the leader's).

  public static final Metric SHARD_LIVE = own(Type.GAUGE, "metareactor.shard.live", null, List.of(),
      "Live shards as this replica sees them");
  public static final Metric SHARD_PARENTS = own(Type.GAUGE, "metareactor.shard.parents", null, SHARDED,
      "Parents (or targets) in this replica's share");
  public static final Metric SHARD_MOVES = own(Type.COUNTER, "metareactor.shard.moves", null, SHARDED,
      "Parents this replica handed to another shard");
  public static final Metric SHARD_HANDOVER = own(Type.HISTOGRAM, "metareactor.shard.handover", null, SHARDED,
      "From the membership change that moved a parent to its label written by its former owner");
  public static final Metric SHARD_ASSIGNMENTS = own(Type.COUNTER, "metareactor.shard.assignments", null, SHARDED,
      "Unassigned parents the sharder gave to a shard");
  public static final Metric SHARD_TAKEOVERS = own(Type.COUNTER, "metareactor.shard.takeovers", null, SHARDED,
      "Parents and owned objects the sharder moved off shards that were not live");

  /**
   * What libraries register: Micrometer's JVM and process binders (bound by the engine at start) and Resilience4j's
   * circuit breaker and retry binders (one circuit breaker and retry per hook URL, {@code name} is the URL). Their
   * names are the libraries'; the help is ours, the libraries' own goes to {@code # HELP}.
   */
  private static final List<Metric> BOUND = List.of(
      bound("ClassLoaderMetrics", Type.GAUGE, "jvm.classes.loaded", "classes", List.of(),
          "Classes loaded now"),
      bound("ClassLoaderMetrics", Type.COUNTER, "jvm.classes.loaded.count", "classes", List.of(),
          "Classes loaded since the JVM started"),
      bound("ClassLoaderMetrics", Type.COUNTER, "jvm.classes.unloaded", "classes", List.of(),
          "Classes unloaded since the JVM started"),
      bound("JvmMemoryMetrics", Type.GAUGE, "jvm.memory.used", "bytes", List.of("area", "id"),
          "Memory used, by area (heap, nonheap) and memory pool"),
      bound("JvmMemoryMetrics", Type.GAUGE, "jvm.memory.committed", "bytes", List.of("area", "id"),
          "Memory committed for the JVM to use, by area and memory pool"),
      bound("JvmMemoryMetrics", Type.GAUGE, "jvm.memory.max", "bytes", List.of("area", "id"),
          "The most memory that can be used, by area and memory pool"),
      bound("JvmMemoryMetrics", Type.GAUGE, "jvm.buffer.count", "buffers", List.of("id"),
          "Buffers in the pool (direct, mapped)"),
      bound("JvmMemoryMetrics", Type.GAUGE, "jvm.buffer.memory.used", "bytes", List.of("id"),
          "Memory the JVM uses for the buffer pool"),
      bound("JvmMemoryMetrics", Type.GAUGE, "jvm.buffer.total.capacity", "bytes", List.of("id"),
          "Total capacity of the buffers in the pool"),
      bound("JvmGcMetrics", Type.GAUGE, "jvm.gc.max.data.size", "bytes", List.of(),
          "The most the long-lived heap memory pool may hold"),
      bound("JvmGcMetrics", Type.GAUGE, "jvm.gc.live.data.size", "bytes", List.of(),
          "The long-lived heap memory pool after its last collection"),
      bound("JvmGcMetrics", Type.COUNTER, "jvm.gc.memory.allocated", "bytes", List.of(),
          "Bytes allocated in the young generation"),
      bound("JvmGcMetrics", Type.COUNTER, "jvm.gc.memory.promoted", "bytes", List.of(),
          "Bytes promoted to the old generation"),
      bound("JvmGcMetrics", Type.SUMMARY, "jvm.gc.pause", null, List.of("action", "cause", "gc"),
          "Time spent in collection pauses"),
      bound("JvmGcMetrics", Type.SUMMARY, "jvm.gc.concurrent.phase.time", null, List.of("action", "cause", "gc"),
          "Time spent in concurrent collection phases (a concurrent collector's: not the launcher's Serial GC)"),
      bound("JvmThreadMetrics", Type.GAUGE, "jvm.threads.live", "threads", List.of(),
          "Live threads, daemon or not"),
      bound("JvmThreadMetrics", Type.GAUGE, "jvm.threads.daemon", "threads", List.of(),
          "Live daemon threads"),
      bound("JvmThreadMetrics", Type.GAUGE, "jvm.threads.peak", "threads", List.of(),
          "The most live threads since the JVM started"),
      bound("JvmThreadMetrics", Type.COUNTER, "jvm.threads.started", "threads", List.of(),
          "Threads started since the JVM started"),
      bound("JvmThreadMetrics", Type.GAUGE, "jvm.threads.states", "threads", List.of("state"),
          "Live threads by state"),
      bound("ProcessorMetrics", Type.GAUGE, "system.cpu.count", null, List.of(),
          "Processors available to the JVM"),
      bound("ProcessorMetrics", Type.GAUGE, "system.cpu.usage", null, List.of(),
          "Recent CPU usage of the whole system, 0 to 1"),
      bound("ProcessorMetrics", Type.GAUGE, "system.load.average.1m", null, List.of(),
          "The system load average over the last minute"),
      bound("ProcessorMetrics", Type.GAUGE, "process.cpu.usage", null, List.of(),
          "Recent CPU usage of the engine's process, 0 to 1"),
      bound("ProcessorMetrics", Type.COUNTER, "process.cpu.time", "ns", List.of(),
          "CPU time the engine's process used"),
      bound("UptimeMetrics", Type.GAUGE, "process.uptime", "seconds", List.of(),
          "How long the JVM has been running"),
      bound("UptimeMetrics", Type.GAUGE, "process.start.time", "seconds", List.of(),
          "When the process started, in seconds since the Unix epoch"),
      bound("TaggedCircuitBreakerMetrics", Type.GAUGE, "resilience4j.circuitbreaker.state", null,
          List.of("name", "state"), "1 for the state a hook URL's circuit breaker is in, 0 for the others"),
      bound("TaggedCircuitBreakerMetrics", Type.SUMMARY, "resilience4j.circuitbreaker.calls", null,
          List.of("kind", "name"), "Calls through the circuit breaker, by outcome (kind)"),
      bound("TaggedCircuitBreakerMetrics", Type.COUNTER, "resilience4j.circuitbreaker.not.permitted.calls", null,
          List.of("kind", "name"), "Calls the open circuit breaker refused"),
      bound("TaggedCircuitBreakerMetrics", Type.GAUGE, "resilience4j.circuitbreaker.buffered.calls", null,
          List.of("kind", "name"), "Calls in the circuit breaker's window, by outcome (kind)"),
      bound("TaggedCircuitBreakerMetrics", Type.GAUGE, "resilience4j.circuitbreaker.slow.calls", null,
          List.of("kind", "name"), "Slow calls in the circuit breaker's window, by outcome (kind)"),
      bound("TaggedCircuitBreakerMetrics", Type.GAUGE, "resilience4j.circuitbreaker.failure.rate", null,
          List.of("name"), "Failed calls in the window, in percent (-1 until the window holds enough calls)"),
      bound("TaggedCircuitBreakerMetrics", Type.GAUGE, "resilience4j.circuitbreaker.slow.call.rate", null,
          List.of("name"), "Slow calls in the window, in percent (-1 until the window holds enough calls)"),
      bound("TaggedRetryMetrics", Type.COUNTER, "resilience4j.retry.calls", null, List.of("kind", "name"),
          "Calls by how their retries went (kind: successful or failed, with or without a retry)"));

  private MetricCatalogue() {}

  /** Every metric the engine exports: Metareactor's own, then those libraries register. */
  public static List<Metric> all() {
    List<Metric> all = new ArrayList<>(OWN);
    all.addAll(BOUND);
    return List.copyOf(all);
  }

  private static Metric own(Type type, String name, @Nullable String baseUnit, List<String> labels, String help) {
    Metric metric = new Metric(name, type, baseUnit, labels, help, null);
    OWN.add(metric);
    return metric;
  }

  private static Metric bound(String binder, Type type, String name, @Nullable String baseUnit, List<String> labels,
      String help) {
    return new Metric(name, type, baseUnit, labels, help, binder);
  }

  private static List<String> with(List<String> labels, String... more) {
    List<String> all = new ArrayList<>(labels);
    all.addAll(List.of(more));
    return all;
  }
}
