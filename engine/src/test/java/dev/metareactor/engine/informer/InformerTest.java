package dev.metareactor.engine.informer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeObject;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The informer's list-and-watch protocol against a scripted API server. */
class InformerTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final Duration WAIT = Duration.ofSeconds(10);

  private FakeApiServer server;
  private KubeApi api;
  private Informer informer;
  private final List<String> events = new CopyOnWriteArrayList<>();
  /** Keeps the time of a watch's silence: the tests move it, nothing else does. */
  private final VirtualTimeScheduler silenceClock = VirtualTimeScheduler.create();

  @BeforeEach
  void start() {
    server = new FakeApiServer("/api/v1/configmaps");
    api = server.api();
  }

  @AfterEach
  void stop() {
    if (informer != null) {
      informer.stop();
    }
    silenceClock.dispose();
    api.close();
    server.close();
  }

  private Informer informer() {
    informer = new Informer(api, CONFIG_MAPS, "", null, "", Duration.ZERO, InformerIndexes.all(),
        Informer.Content.OBJECTS, null, Schedulers.parallel(), silenceClock);
    informer.addHandler(event -> events.add(event.type() + " " + event.object().name() + "@"
        + event.object().resourceVersion()));
    return informer;
  }

  /** A ConfigMap in namespace ns, without apiVersion and kind, as list items of built-in types come. */
  private static String item(String name, String rv, String labels) {
    return "{\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"ns\",\"uid\":\"uid-" + name
        + "\",\"resourceVersion\":\"" + rv + "\",\"labels\":{" + labels + "},\"managedFields\":[{\"manager\":\"m\"}]}}";
  }

  private static String list(String version, String continueToken, String... items) {
    return "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"" + version + "\",\"continue\":\""
        + continueToken + "\"},\"items\":[" + String.join(",", items) + "]}";
  }

  private static String event(String type, String object) {
    return "{\"type\":\"" + type + "\",\"object\":" + object.replace("{\"metadata\"",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\"") + "}";
  }

  private List<String> watchVersions() {
    return server.requests.stream().filter(q -> q.containsKey("watch"))
        .map(q -> q.get("resourceVersion").get(0)).toList();
  }

  private long lists() {
    return server.requests.stream().filter(q -> !q.containsKey("watch")).count();
  }

  @Test
  void listsEveryPageThenWatchesFromTheListAndFollowsBookmarks() {
    server.page("", list("10", "next", item("a", "1", "\"app\":\"x\"")));
    server.page("next", list("10", "", item("b", "2", "")));
    server.watch(FakeApiServer.Watch.ending(
        event("ADDED", item("c", "11", "\"app\":\"x\"")),
        event("MODIFIED", item("a", "12", "\"app\":\"y\"")),
        event("DELETED", item("b", "13", "")),
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"20\"}}}"));
    informer().start();

    await().atMost(WAIT).until(() -> watchVersions().size() >= 2);
    assertThat(informer.hasSynced()).isTrue();
    assertThat(watchVersions()).startsWith("10", "20");
    assertThat(events.subList(0, 2)).containsExactlyInAnyOrder("ADDED a@1", "ADDED b@2");
    assertThat(events.subList(2, events.size())).containsExactly("ADDED c@11", "UPDATED a@12", "DELETED b@13");

    assertThat(informer.list()).extracting(KubeObject::name).containsExactlyInAnyOrder("a", "c");
    assertThat(informer.byIndex(InformerIndexes.BY_LABEL, "app=x")).extracting(KubeObject::name).containsExactly("c");
    assertThat(informer.byIndex(InformerIndexes.BY_LABEL, "app=y")).extracting(KubeObject::name).containsExactly("a");
    assertThat(informer.byIndex(InformerIndexes.ORPHANS_BY_NAMESPACE, "ns")).hasSize(2);
    KubeObject a = informer.get("ns", "a");
    assertThat(a.kind()).isEqualTo("ConfigMap");
    assertThat(a.apiVersion()).isEqualTo("v1");
    assertThat(a.toTree().path("metadata").has("managedFields")).isFalse();
  }

  /**
   * The promise a handed-over parent is synced on: a version read from the informer on another thread means every
   * object up to it is in the store and the indexes. Indexing each object, the informer must not have moved to its
   * version yet (it did, before: a sync woken by the first of a parent's moved children could read the version of
   * the last one while that one was not indexed, and create it again).
   */
  @Test
  void itsResourceVersionNeverRunsAheadOfTheStoreAndIndexesNorBehindADeliveredChange() {
    server.page("", list("10", "", item("a", "1", ""), item("b", "2", "")));
    server.page("", list("30", "", item("a", "1", ""), item("c", "25", "")));
    server.watch(FakeApiServer.Watch.ending(
        event("ADDED", item("d", "11", "")),
        event("MODIFIED", item("a", "12", "")),
        event("DELETED", item("b", "13", "")),
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}"));
    List<String> ahead = new CopyOnWriteArrayList<>();
    List<String> behind = new CopyOnWriteArrayList<>();
    Map<String, Informer.IndexFunction> indexes = new java.util.HashMap<>(InformerIndexes.all());
    Set<String> indexed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    indexes.put("probe", object -> {
      // An index function is asked for an object's keys when it comes in and again when it leaves: only the first
      // time is its indexing.
      String seen = informer.resourceVersion();
      if (indexed.add(object.name() + "@" + object.resourceVersion())
          && seen != null && Long.parseLong(seen) >= Long.parseLong(object.resourceVersion())) {
        ahead.add(object.name() + "@" + object.resourceVersion() + " indexed with the informer at " + seen);
      }
      return List.of();
    });
    informer = new Informer(api, CONFIG_MAPS, "", null, "", Duration.ZERO, indexes, Informer.Content.OBJECTS, null,
        Schedulers.parallel(), silenceClock);
    informer.addHandler(event -> {
      events.add(event.type() + " " + event.object().name());
      String seen = informer.resourceVersion();
      if (seen == null || Long.parseLong(seen) < Long.parseLong(event.object().resourceVersion())) {
        behind.add(event.type() + " " + event.object().name() + " delivered with the informer at " + seen);
      }
    });
    informer.start();

    await().atMost(WAIT).until(() -> watchVersions().size() >= 2);
    assertThat(events).contains("ADDED d", "UPDATED a", "DELETED b", "ADDED c");
    assertThat(ahead).as("objects indexed after the informer's version had moved past them").isEmpty();
    assertThat(behind).as("changes delivered before the informer's version had moved to them").isEmpty();
  }

  @Test
  void aResourceVersionTooOldRelistsAndDeliversOnlyTheDifference() {
    server.page("", list("10", "", item("a", "1", ""), item("b", "2", "")));
    server.page("", list("30", "", item("a", "1", ""), item("c", "25", "")));
    server.watch(FakeApiServer.Watch.ending("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
        + "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}"));
    informer().start();

    await().atMost(WAIT).until(() -> watchVersions().size() >= 2);
    assertThat(lists()).isEqualTo(2);
    // The first list may come from the API server's cache; the one after 410 must be a consistent read.
    assertThat(server.requests.stream().filter(q -> !q.containsKey("watch"))
        .map(q -> q.getOrDefault("resourceVersion", List.of("(none)")).get(0)).toList())
        .containsExactly("0", "(none)");
    assertThat(watchVersions()).startsWith("10", "30");
    assertThat(events.subList(2, events.size())).containsExactlyInAnyOrder("ADDED c@25", "DELETED b@2");
    assertThat(informer.list()).extracting(KubeObject::name).containsExactlyInAnyOrder("a", "c");
    assertThat(informer.expired()).isEqualTo(1);
  }

  @Test
  void aRefusedWatchWithRetryAfterIsTriedAgainAfterItAndTheCacheIsNotFollowingMeanwhile() {
    server.page("", list("10", "", item("a", "1", "")));
    // Longer than the first backoff (0.5-1 s) would wait.
    server.watch(FakeApiServer.Watch.refused(429, 2));
    Sinks.Many<String> more = Sinks.many().unicast().onBackpressureBuffer();
    server.watch(FakeApiServer.Watch.open(more));
    informer().start();

    await().atMost(WAIT).until(() -> watchVersions().size() >= 1);
    await().atMost(WAIT).until(() -> informer.notFollowingFor(System.nanoTime()) > 0);
    await().atMost(WAIT).until(() -> watchVersions().size() >= 2);
    List<Long> watchedAt = java.util.stream.IntStream.range(0, server.requests.size())
        .filter(i -> server.requests.get(i).containsKey("watch")).mapToObj(server.requestTimes::get).toList();
    assertThat(Duration.ofNanos(watchedAt.get(1) - watchedAt.get(0))).as("Retry-After: 2 honoured")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    await().atMost(WAIT).until(() -> informer.notFollowingFor(System.nanoTime()) == 0);
    assertThat(lists()).isEqualTo(1);
  }

  /**
   * A failing informer waits out its backoff (here the 30 s a Retry-After asked for, as long as a backoff grows)
   * unless told that its resource is served again: then it tries at once.
   */
  @Test
  void aFailingInformerToldItsResourceIsServedAgainRetriesAtOnce() {
    server.page("", list("10", "", item("a", "1", "")));
    server.watch(FakeApiServer.Watch.refused(503, 30));
    Sinks.Many<String> more = Sinks.many().unicast().onBackpressureBuffer();
    server.watch(FakeApiServer.Watch.open(more));
    informer().start();
    await().atMost(WAIT).until(() -> informer.notFollowingFor(System.nanoTime()) > 0);

    informer.retryNow();
    await().atMost(WAIT).until(() -> watchVersions().size() >= 2);
    await().atMost(WAIT).until(() -> informer.notFollowingFor(System.nanoTime()) == 0);
  }

  @Test
  void aWatchTheServerEndsIsResumedWithoutAList() {
    server.page("", list("10", "", item("a", "1", "")));
    server.watch(FakeApiServer.Watch.ending(event("ADDED", item("x", "11", ""))));
    informer().start();

    await().atMost(WAIT).until(() -> watchVersions().size() >= 2);
    assertThat(watchVersions()).startsWith("10", "11");
    assertThat(lists()).isEqualTo(1);
  }

  @Test
  void aHandlerAddedLaterGetsTheCacheAndThenTheLiveEventsWithNothingLost() {
    Sinks.Many<String> more = Sinks.many().unicast().onBackpressureBuffer();
    server.page("", list("10", "", item("a", "1", ""), item("b", "2", "")));
    server.watch(FakeApiServer.Watch.open(more));
    informer().start();
    await().atMost(WAIT).until(() -> informer.hasSynced() && !watchVersions().isEmpty());

    List<String> late = new CopyOnWriteArrayList<>();
    informer.addHandler(event -> late.add(event.type() + " " + event.object().name()));
    more.tryEmitNext(event("MODIFIED", item("a", "11", "\"k\":\"v\"")));
    await().atMost(WAIT).until(() -> late.size() >= 3);
    assertThat(late.subList(0, 2)).containsExactlyInAnyOrder("ADDED a", "ADDED b");
    assertThat(late.get(2)).isEqualTo("UPDATED a");
    assertThat(informer.get("ns", "a").labels()).isEqualTo(Map.of("k", "v"));
  }

  /**
   * The watch runs inside the chain that made the list, for minutes: an object the list brought must not stay
   * reachable through it once the cache holds a newer version (it did, a second copy of every parent of a
   * 10,000-parent converge until the first watch ended).
   */
  @Test
  void anObjectTheWatchChangedIsNotKeptByTheListThatBroughtIt() {
    Sinks.Many<String> more = Sinks.many().unicast().onBackpressureBuffer();
    server.page("", list("10", "", item("a", "1", "")));
    server.watch(FakeApiServer.Watch.open(more));
    informer().start();
    await().atMost(WAIT).until(() -> informer.hasSynced() && !watchVersions().isEmpty());
    WeakReference<KubeObject> listed = new WeakReference<>(informer.get("ns", "a"));

    more.tryEmitNext(event("MODIFIED", item("a", "11", "")));
    await().atMost(WAIT).until(() -> events.contains("UPDATED a@11"));
    await().atMost(WAIT).until(() -> {
      System.gc();
      return listed.get() == null;
    });
    assertThat(watchVersions()).containsExactly("10");
  }

  /**
   * A connection that goes quiet without closing (half-open) is given up after three minutes without a line, and
   * watched again from the last resourceVersion without a list; a line resets the silence.
   */
  @Test
  void aWatchSilentForThreeMinutesIsWatchedAgainFromItsResourceVersion() {
    Sinks.Many<String> quiet = Sinks.many().unicast().onBackpressureBuffer();
    server.page("", list("10", "", item("a", "1", "")));
    server.watch(FakeApiServer.Watch.open(quiet));
    informer().start();
    await().atMost(WAIT).until(() -> informer.hasSynced() && watchVersions().size() == 1);

    // Three minutes: three bookmarks missed (Informer.WATCH_SILENCE says why).
    Duration justShort = Duration.ofMinutes(3).minusSeconds(1);
    silenceClock.advanceTimeBy(justShort);
    // Still the same watch: a line it sends now arrives (a watch given up would have dropped it).
    quiet.tryEmitNext(event("ADDED", item("b", "11", "")));
    await().atMost(WAIT).until(() -> events.contains("ADDED b@11"));
    silenceClock.advanceTimeBy(justShort);
    quiet.tryEmitNext("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
        + "{\"resourceVersion\":\"15\"}}}");
    quiet.tryEmitNext(event("ADDED", item("c", "16", "")));
    await().atMost(WAIT).until(() -> events.contains("ADDED c@16"));
    assertThat(informer.silent()).isZero();

    silenceClock.advanceTimeBy(Duration.ofMinutes(3));
    await().atMost(WAIT).until(() -> watchVersions().size() == 2);
    assertThat(watchVersions()).containsExactly("10", "16");
    assertThat(lists()).isEqualTo(1);
    assertThat(informer.silent()).isEqualTo(1);
  }
}
