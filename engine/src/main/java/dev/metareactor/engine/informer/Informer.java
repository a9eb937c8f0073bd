package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.IndexBucket;
import java.net.ConnectException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One resource's objects (or one object of it), listed and then watched from the API server and kept in memory,
 * client-go's reflector and indexer in one:
 *
 * <ul>
 *   <li><b>List, then watch</b> from the list's resourceVersion with bookmarks; a watch the server ends is resumed
 *       from the last resourceVersion seen; a resourceVersion the server no longer has (410 Gone) relists, and the
 *       difference between the cache and the new list is delivered as events; a failure is retried after a
 *       jittered exponential backoff (1 s up to 30 s).</li>
 *   <li><b>Serial</b>: every change of the cache and every event delivery runs on one worker of a shared scheduler,
 *       in the order the server sent them. A handler added later first receives an {@code ADDED} event for each
 *       cached object, then the live events, with nothing lost or doubled in between.</li>
 *   <li><b>Reads</b> ({@link #get}, {@link #list}, {@link #byIndex}) never block and may come from any thread; an
 *       index bucket holds the objects themselves, so a reader sees each object in a state that really was in that
 *       bucket.</li>
 *   <li><b>Resync</b>: every {@code resync} the cache is replayed to the handlers as updates whose old and new
 *       object are the same (the {@code --cache-flush-interval}, as upstream: a replay, not a relist).</li>
 * </ul>
 *
 * <p>Objects are {@link KubeObject}s: bytes plus parsed metadata, without {@code managedFields} but for what the
 * engine's field manager applied.
 */
final class Informer {

  private static final Logger LOG = LoggerFactory.getLogger(Informer.class);
  private static final int PAGE = 500;
  private static final Duration MIN_BACKOFF = Duration.ofSeconds(1);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  /**
   * The longest backoff while the server refuses connections (it is down or restarting): a refused connection costs
   * the server nothing, and with the 30 s of a server that answers errors, caches would follow a restarted server
   * up to 30 s late.
   */
  private static final Duration MAX_BACKOFF_UNREACHABLE = Duration.ofSeconds(4);
  /** A watch lasts 5 to 10 minutes before the server ends it, as client-go asks (spreads the reconnects). */
  private static final int MIN_WATCH_SECONDS = 300;
  /**
   * No line for this long, bookmarks included, means the connection died without closing (a half-open TCP
   * connection: a node or a load balancer gone): watch again from the last resourceVersion. Every watch asks for
   * bookmarks ({@code allowWatchBookmarks}), and the API server's watch cache sends one to each watcher about every
   * minute (and two seconds before the watch's own timeout), so three minutes are three missed bookmarks: a live
   * connection never stays that quiet. A resource served without the watch cache sends no periodic bookmarks; its
   * quiet watches are then restarted every three minutes, from their resourceVersion, which costs one request and
   * no list.
   */
  static final Duration WATCH_SILENCE = Duration.ofMinutes(3);

  /** Receives events, on the informer's worker; must not block. */
  @FunctionalInterface
  interface Handler {
    void onEvent(ObjectEvent event);
  }

  /** What the informer asks the API server for. */
  enum Content {
    /** Whole objects. */
    OBJECTS("application/json", "application/json"),
    /**
     * Only their metadata ({@code PartialObjectMetadata}), for following changes of a resource whose objects are
     * large and never read (CustomResourceDefinitions, with their schemas).
     */
    METADATA("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");

    final String listAccept;
    final String watchAccept;

    Content(String listAccept, String watchAccept) {
      this.listAccept = listAccept;
      this.watchAccept = watchAccept;
    }
  }

  /** How one index files an object: the bucket keys it belongs under (none to leave it out). */
  @FunctionalInterface
  interface IndexFunction {
    List<String> keys(KubeObject object);
  }

  private final KubeApi api;
  private final ApiResource resource;
  private final String description;
  private final String collectionPath;
  private final String selector;
  private final Duration resync;
  private final Map<String, IndexFunction> indexFunctions;
  private final Content content;
  private final @Nullable String fieldManager;
  private final Scheduler serial;
  /** Keeps the time of {@link #WATCH_SILENCE}. */
  private final Scheduler timer;

  private final Map<Key, KubeObject> store = new ConcurrentHashMap<>();
  private final Map<String, Map<String, IndexBucket<Key, KubeObject>>> indexes = new ConcurrentHashMap<>();
  private final List<Handler> handlers = new CopyOnWriteArrayList<>();

  /**
   * The resourceVersion of the last list, event or bookmark: where the next watch starts, and how far the cache has
   * caught up ({@link #resourceVersion()}). Written only on the serial worker, after the store and the indexes hold
   * the change it comes with and before that change is delivered: a reader on another thread that sees a version
   * finds every object up to it in the cache (a handed-over parent is synced on that promise, {@code Handover}), and
   * a handler that enqueues a sync finds it already moved.
   */
  private volatile @Nullable String resourceVersion;
  // Touched only on the serial worker.
  private boolean needList = true;
  /**
   * Whether a list may be served from the API server's watch cache ({@code resourceVersion=0}, as client-go's
   * reflector lists first: no etcd read); after a 410 the next list is a consistent read.
   */
  private boolean listFromCache = true;
  private int failures;
  /** {@link #failingSince} while the cache follows the server. */
  private static final long FOLLOWING = Long.MIN_VALUE;
  /**
   * When (nanoTime) a list or watch last failed with no list or accepted watch since, or {@link #FOLLOWING}: how
   * long the cache may have been missing changes.
   */
  private volatile long failingSince = FOLLOWING;
  /** Watches the server ended with 410 Gone, each followed by a relist. */
  private final AtomicLong expired = new AtomicLong();
  /** Watches given up after {@link #WATCH_SILENCE} without a line, each followed by a new watch. */
  private final AtomicLong silent = new AtomicLong();

  private volatile boolean synced;
  private volatile boolean stopped;
  /** Ends the backoff after a failure early ({@link #retryNow}); a new one for each wait. */
  private volatile Sinks.Empty<Void> wake = Sinks.empty();
  private @Nullable Disposable running;
  private @Nullable Disposable resyncing;

  /**
   * @param namespace only this namespace's objects ({@code ""} for every namespace, or a cluster-scoped resource)
   * @param name only the object of this name, or {@code null} for all
   * @param labelSelector only objects whose labels match (the API's syntax); {@code ""} for all
   * @param indexes the indexes to keep, by name
   * @param content whole objects or only their metadata
   * @param fieldManager the field manager whose server-side apply field sets the cached objects keep, or
   *     {@code null} for none ({@link KubeObject#appliedFields})
   * @param scheduler where the informer's worker comes from
   * @param timer where a watch's silence is timed ({@link #WATCH_SILENCE})
   */
  Informer(KubeApi api, ApiResource resource, String namespace, @Nullable String name, String labelSelector,
      Duration resync, Map<String, IndexFunction> indexes, Content content, @Nullable String fieldManager,
      Scheduler scheduler, Scheduler timer) {
    this.api = Objects.requireNonNull(api, "api");
    this.resource = Objects.requireNonNull(resource, "resource");
    this.collectionPath = ApiWriter.path(resource, resource.namespaced() ? namespace : "", null);
    this.selector = (name == null ? "" : "&fieldSelector=" + URLEncoder.encode("metadata.name=" + name,
        StandardCharsets.UTF_8))
        + (labelSelector.isEmpty() ? ""
            : "&labelSelector=" + URLEncoder.encode(labelSelector, StandardCharsets.UTF_8));
    this.description = (name != null ? resource + " " + KubeObject.namespacedName(namespace, name)
        : namespace.isEmpty() || !resource.namespaced() ? resource.toString() : resource + " in " + namespace)
        + (labelSelector.isEmpty() ? "" : " (" + labelSelector + ")");
    this.resync = Objects.requireNonNull(resync, "resync");
    this.indexFunctions = Map.copyOf(indexes);
    this.indexFunctions.keySet().forEach(index -> this.indexes.put(index, new ConcurrentHashMap<>()));
    this.content = Objects.requireNonNull(content, "content");
    this.fieldManager = fieldManager;
    this.serial = Schedulers.single(scheduler);
    this.timer = Objects.requireNonNull(timer, "timer");
  }

  /** Starts listing and watching in the background. */
  synchronized void start() {
    if (running != null || stopped) {
      return;
    }
    running = Mono.defer(this::cycle)
        .onErrorResume(this::afterFailure)
        .repeat(() -> !stopped)
        .subscribeOn(serial)
        .subscribe();
    if (!resync.isZero()) {
      // The serial worker cannot keep time; the timer ticks elsewhere and the replay hops onto the worker.
      resyncing = Flux.interval(resync, resync).onBackpressureDrop().publishOn(serial).subscribe(tick -> replay());
    }
  }

  synchronized void stop() {
    stopped = true;
    if (running != null) {
      running.dispose();
    }
    if (resyncing != null) {
      resyncing.dispose();
    }
    serial.dispose();
  }

  /** Whether the first list has been received. */
  boolean hasSynced() {
    return synced;
  }

  /**
   * For how long the cache has not been following the server (its lists and watches failing), in nanoseconds at
   * {@code now} ({@link System#nanoTime}); 0 while it follows.
   */
  long notFollowingFor(long now) {
    long since = failingSince;
    return since == FOLLOWING ? 0 : Math.max(1, now - since);
  }

  /**
   * The resourceVersion the cache has caught up to: that of the last list, event or bookmark received; {@code null}
   * before the first list.
   */
  @Nullable String resourceVersion() {
    return resourceVersion;
  }

  /** How many objects the cache holds now. */
  int size() {
    return store.size();
  }

  /** How many times a resourceVersion the server no longer had (410 Gone) made the informer relist. */
  long expired() {
    return expired.get();
  }

  /** How many watches were given up for a silence of {@link #WATCH_SILENCE} (and watched again). */
  long silent() {
    return silent.get();
  }

  @Nullable KubeObject get(String namespace, String name) {
    return store.get(key(resource.namespaced() ? namespace : "", name));
  }

  List<KubeObject> list() {
    return new ArrayList<>(store.values());
  }

  /** The objects filed under {@code key} in {@code index}. */
  List<KubeObject> byIndex(String index, String key) {
    Map<String, IndexBucket<Key, KubeObject>> buckets = indexes.get(index);
    if (buckets == null) {
      throw new IllegalArgumentException("no index " + index + " on the informer of " + description);
    }
    IndexBucket<Key, KubeObject> bucket = buckets.get(key);
    return bucket == null ? List.of() : bucket.values();
  }

  /**
   * Adds a handler: first an {@code ADDED} for each cached object, then every event; {@link Disposable#dispose()}
   * removes it.
   */
  Disposable addHandler(Handler handler) {
    serial.schedule(() -> {
      for (KubeObject object : store.values()) {
        deliver(handler, new ObjectEvent(ObjectEvent.Type.ADDED, null, object));
      }
      handlers.add(handler);
    });
    return () -> handlers.remove(handler);
  }

  // ---- list and watch (on the serial worker)

  private Mono<Void> cycle() {
    Mono<Void> list = needList ? listAll() : Mono.empty();
    return list.thenMany(Flux.defer(() -> {
          WatchSilence silence = new WatchSilence(timer, WATCH_SILENCE);
          return api.watch(watchPath(), content.watchAccept, this::following)
              .doOnNext(line -> silence.heard())
              .takeUntilOther(silence.ended().doOnNext(tick -> silenced()));
        }))
        .publishOn(serial, 256)
        .doOnNext(this::onLine)
        .then();
  }

  /** A watch that said nothing for {@link #WATCH_SILENCE}: given up, and the next cycle watches again at once. */
  private void silenced() {
    silent.incrementAndGet();
    LOG.info("informer of {}: no event or bookmark for {} minutes; watching again from resourceVersion {}",
        description, WATCH_SILENCE.toMinutes(), resourceVersion);
  }

  private String watchPath() {
    int seconds = MIN_WATCH_SECONDS + ThreadLocalRandom.current().nextInt(MIN_WATCH_SECONDS);
    return collectionPath + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + resourceVersion
        + "&timeoutSeconds=" + seconds + selector;
  }

  /**
   * Lists every page, then replaces the cache with the result.
   *
   * <p>The watch that follows runs inside the same chain ({@link #cycle}), which holds this list's operators, and
   * with them whatever they capture, for as long as the watch lasts (five to ten minutes). So the listed objects are
   * let go as soon as the cache holds them: kept, they would be a second copy of each listed object the watch changes
   * and of each one a relist found unchanged (the first versions of 10,000 parents, several megabytes, through a
   * whole 10,000-parent converge and update wave).
   */
  private Mono<Void> listAll() {
    AtomicReference<Map<Key, KubeObject>> listed = new AtomicReference<>(new HashMap<>());
    String[] version = new String[1];
    return page("").expand(body -> {
          String next = readPage(body, Objects.requireNonNull(listed.get(), "read before replaced"), version);
          return next.isEmpty() ? Mono.empty() : page(next);
        })
        .publishOn(serial)
        .then(Mono.fromRunnable(() -> replace(
            Objects.requireNonNull(listed.getAndSet(null), "a list replaces the cache once"), version[0])));
  }

  /**
   * Reads one page of a list straight into objects (no tree of the whole list); returns the continue token.
   *
   * @param version receives the list's resourceVersion
   */
  private String readPage(byte[] body, Map<Key, KubeObject> listed, String[] version) {
    String next = "";
    try (JsonParser parser = KubeJson.objectParser(body)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new IllegalStateException("a list of " + description + " that is not a JSON object");
      }
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        if (field.equals("metadata") && value == JsonToken.START_OBJECT) {
          JsonNode metadata = KubeJson.readValue(parser);
          next = metadata.path("continue").asString("");
          version[0] = metadata.path("resourceVersion").asString("");
        } else if (field.equals("items") && value == JsonToken.START_ARRAY) {
          while (parser.nextToken() == JsonToken.START_OBJECT) {
            KubeObject object = KubeObject.read(parser, body, resource.apiVersion(), resource.kind(), fieldManager);
            listed.put(key(object), object);
          }
        } else {
          parser.skipChildren();
        }
      }
    }
    return next;
  }

  private Mono<byte[]> page(String continueToken) {
    String query = "?limit=" + PAGE + selector + (!continueToken.isEmpty()
        ? "&continue=" + URLEncoder.encode(continueToken, StandardCharsets.UTF_8)
        : listFromCache ? "&resourceVersion=0" : "");
    return api.get(collectionPath + query, content.listAccept);
  }

  /** The cache becomes {@code listed}; what differs is delivered as events. */
  private void replace(Map<Key, KubeObject> listed, String listVersion) {
    List<ObjectEvent> changes = new ArrayList<>();
    for (Map.Entry<Key, KubeObject> entry : listed.entrySet()) {
      ObjectEvent change = upsert(entry.getKey(), entry.getValue());
      if (change != null) {
        changes.add(change);
      }
    }
    for (Map.Entry<Key, KubeObject> entry : new ArrayList<>(store.entrySet())) {
      if (!listed.containsKey(entry.getKey())) {
        changes.add(remove(entry.getKey(), entry.getValue()));
      }
    }
    resourceVersion = listVersion;
    changes.forEach(this::dispatch);
    following();
    needList = false;
    listFromCache = true;
    failures = 0;
    if (!synced) {
      LOG.debug("informer of {} synced: {} objects", description, store.size());
    }
    synced = true;
  }

  /** A list arrived or the server accepted a watch: the cache follows the server again. */
  private void following() {
    failingSince = FOLLOWING;
  }

  /** One watch event: {@code {"type": ..., "object": {...}}}, read without building a tree of the object. */
  private void onLine(byte[] line) {
    String type = "";
    KubeObject object = null;
    JsonNode other = null;
    try (JsonParser parser = KubeJson.objectParser(line)) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        if (field.equals("type") && value == JsonToken.VALUE_STRING) {
          type = parser.getString();
        } else if (field.equals("object") && value == JsonToken.START_OBJECT) {
          // The API server writes the type first; bookmarks and errors carry no Kubernetes object.
          if (type.equals("ADDED") || type.equals("MODIFIED") || type.equals("DELETED")) {
            object = KubeObject.read(parser, line, resource.apiVersion(), resource.kind(), fieldManager);
          } else {
            other = KubeJson.readValue(parser);
          }
        } else {
          parser.skipChildren();
        }
      }
    }
    failures = 0;
    switch (type) {
      case "ADDED", "MODIFIED" -> {
        KubeObject changed = eventObject(object, other);
        ObjectEvent change = upsert(key(changed), changed);
        resourceVersion = changed.resourceVersion();
        if (change != null) {
          dispatch(change);
        }
      }
      case "DELETED" -> {
        KubeObject gone = eventObject(object, other);
        Key key = key(gone);
        ObjectEvent change = store.containsKey(key) ? remove(key, gone) : null;
        resourceVersion = gone.resourceVersion();
        if (change != null) {
          dispatch(change);
        }
      }
      case "BOOKMARK" -> resourceVersion = other == null ? resourceVersion
          : other.path("metadata").path("resourceVersion").asString(resourceVersion);
      case "ERROR" -> {
        JsonNode status = other == null ? KubeJson.nodes().objectNode() : other;
        throw new ApiException(status.path("code").asInt(0), status.path("reason").asString(""), "watch of "
            + description + ": " + status.path("message").asString(""), null);
      }
      default -> LOG.debug("informer of {}: ignoring a watch event of type {}", description, type);
    }
  }

  /** A watch event's object: read as it came, or from its tree when it came before the event's type. */
  private KubeObject eventObject(@Nullable KubeObject object, @Nullable JsonNode tree) {
    return object != null ? object
        : KubeObject.parse(KubeJson.bytes(withType((ObjectNode) Objects.requireNonNull(tree,
            "a watch event without an object"))), fieldManager);
  }

  /** Retries a failed list or watch: at once with a relist after 410 Gone, else after a backoff. */
  private Mono<Void> afterFailure(Throwable error) {
    if (stopped) {
      return Mono.empty();
    }
    if (failingSince == FOLLOWING) {
      failingSince = System.nanoTime();
    }
    if (ApiException.codeOf(error) == 410) {
      LOG.info("informer of {}: resourceVersion {} is gone from the server; relisting", description,
          resourceVersion);
      expired.incrementAndGet();
      needList = true;
      listFromCache = false;
      return Mono.empty();
    }
    failures++;
    Duration max = refused(error) ? MAX_BACKOFF_UNREACHABLE : MAX_BACKOFF;
    long base = Math.min(max.toMillis(), MIN_BACKOFF.toMillis() << Math.min(failures - 1, 10));
    long delay = base / 2 + ThreadLocalRandom.current().nextLong(base / 2 + 1);
    Duration retryAfter = ApiException.retryAfterOf(error);
    if (retryAfter != null) {
      // A server starting up or shedding load says when to come back ("storage is (re)initializing").
      delay = Math.min(Math.max(retryAfter.toMillis(), MIN_BACKOFF.toMillis() / 2), MAX_BACKOFF.toMillis());
    }
    String message = error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
    if (failures == 1 || failures % 10 == 0) {
      LOG.warn("informer for {} failed, retrying: {}", description, message);
    } else {
      LOG.debug("informer for {} failed again ({}), retrying in {} ms: {}", description, failures, delay, message);
    }
    Sinks.Empty<Void> woken = Sinks.empty();
    wake = woken;
    return Mono.firstWithSignal(Mono.delay(Duration.ofMillis(delay)).then(), woken.asMono()).publishOn(serial)
        .then();
  }

  /**
   * Ends the backoff of a failing list or watch now: its resource is served again (a CRD created again, an
   * aggregated API back), and a backoff grown to 30 s would keep the cache behind for that long. Does nothing while
   * the informer follows the server.
   */
  void retryNow() {
    wake.tryEmitEmpty();
  }

  /** Whether {@code error} is a connection the server refused. */
  private static boolean refused(Throwable error) {
    for (Throwable cause = error; cause != null; cause = cause.getCause()) {
      if (cause instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  // ---- the cache (on the serial worker)

  /**
   * Puts {@code object} into the store and the indexes; returns the change to deliver once the resourceVersion has
   * moved, or {@code null} when nothing changed.
   */
  private @Nullable ObjectEvent upsert(Key key, KubeObject object) {
    KubeObject previous = store.get(key);
    if (previous != null && Objects.equals(previous.resourceVersion(), object.resourceVersion())) {
      return null; // a relist that found it unchanged
    }
    store.put(key, object);
    reindex(key, previous, object);
    return previous == null ? new ObjectEvent(ObjectEvent.Type.ADDED, null, object)
        : new ObjectEvent(ObjectEvent.Type.UPDATED, previous, object);
  }

  /** Takes the object out of the store and the indexes; returns the change to deliver. */
  private ObjectEvent remove(Key key, KubeObject lastState) {
    KubeObject previous = store.remove(key);
    reindex(key, previous, null);
    return new ObjectEvent(ObjectEvent.Type.DELETED, null, lastState);
  }

  private void reindex(Key key, @Nullable KubeObject previous, @Nullable KubeObject current) {
    indexFunctions.forEach((index, function) -> {
      Map<String, IndexBucket<Key, KubeObject>> buckets =
          Objects.requireNonNull(indexes.get(index), "the constructor keeps an index per function");
      List<String> before = previous == null ? List.of() : function.keys(previous);
      List<String> after = current == null ? List.of() : function.keys(current);
      for (String bucketKey : after) {
        KubeObject filed = Objects.requireNonNull(current, "only an object that is there has keys");
        buckets.compute(bucketKey, (k, bucket) -> bucket == null ? IndexBucket.of(key, filed)
            : bucket.with(key, filed));
      }
      for (String bucketKey : before) {
        if (!after.contains(bucketKey)) {
          buckets.computeIfPresent(bucketKey, (k, bucket) -> bucket.without(key));
        }
      }
    });
  }

  private void replay() {
    for (KubeObject object : store.values()) {
      dispatch(new ObjectEvent(ObjectEvent.Type.UPDATED, object, object));
    }
  }

  private void dispatch(ObjectEvent event) {
    for (Handler handler : handlers) {
      deliver(handler, event);
    }
  }

  private void deliver(Handler handler, ObjectEvent event) {
    try {
      handler.onEvent(event);
    } catch (RuntimeException e) {
      LOG.error("a handler of the informer of {} failed on {}", description, event.object(), e);
    }
  }

  // ---- keys

  /**
   * Where the store and the index buckets file an object: its namespace and name, the object's own strings (a
   * {@code namespace/name} String would be another copy of both in every entry).
   */
  private record Key(String namespace, String name) {}

  private static Key key(KubeObject object) {
    return new Key(object.namespace(), object.name());
  }

  private static Key key(String namespace, String name) {
    return new Key(namespace, name);
  }

  /** List items of built-in types carry no apiVersion and kind; objects always do here, first, as in a watch. */
  private ObjectNode withType(ObjectNode object) {
    if (object.has("apiVersion") && object.has("kind")) {
      return object;
    }
    ObjectNode typed = KubeJson.nodes().objectNode();
    typed.put("apiVersion", resource.apiVersion());
    typed.put("kind", resource.kind());
    object.properties().forEach(field -> {
      if (!field.getKey().equals("apiVersion") && !field.getKey().equals("kind")) {
        typed.set(field.getKey(), field.getValue());
      }
    });
    return typed;
  }

  @Override
  public String toString() {
    return "informer of " + description;
  }
}
