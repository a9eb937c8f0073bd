package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.controller.map.MapController;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.history.ParentRef;
import dev.metareactor.engine.history.SyncEntry;
import dev.metareactor.engine.history.SyncHistory;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.shard.Membership;
import dev.metareactor.engine.shard.Rendezvous;
import dev.metareactor.engine.shard.ShardAssigner;
import dev.metareactor.engine.shard.ShardKeys;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.engine.tracing.Tracing;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.node.ObjectNode;

/**
 * The causes a hosted controller's own enqueue sites give, in the middle tier (a real CompositeController over
 * in-memory informers and API, a real hook): the caches' initial list when it starts, a parent's event, the
 * {@code resyncPeriodSeconds} timer and a retry after a failed sync. Each sync's causes reach the worker, which logs
 * them at debug ({@link SyncRunner}) and keeps them in the ring of recent syncs with what the sync did (its wait, its
 * hook call and answer size, its writes, its outcome and error: {@link RecentSyncs}); the routers' own causes are
 * their tests', but the ring's record of two of them is here: a MapController's input change (a whole
 * MapController) and a shard move ({@code --sharding}, a membership change).
 */
class SyncCausesTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource OUTPUTS =
      new ApiResource("test.metareactor.dev", "v1", "outputs", "Output", true, Set.of("status"));
  private static final ApiResource LEASES =
      new ApiResource("coordination.k8s.io", "v1", "leases", "Lease", true, Set.of());

  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final AtomicBoolean failing = new AtomicBoolean();
  private final HookServer hook = HookServer.builder().route("/sync", request -> {
    ObjectNode answer = KubeJson.nodes().objectNode();
    // Only the edit's sync fails (the parent at generation 2), once: under load the first sync's hook call can come
    // after the test has armed the failure, and must not take it.
    if (request.path("parent").path("metadata").path("generation").asInt() == 2 && failing.getAndSet(false)) {
      return answer.put("children", "not a list"); // refused: the sync fails
    }
    answer.putObject("status").put("synced", true);
    answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap")
        .putObject("metadata").put("name", "a-0");
    return answer;
  }).start();
  private final LoggedSyncCauses logged = new LoggedSyncCauses();
  private final SyncHistory history = new SyncHistory(16, 1 << 20);
  private HostedController controller;

  @AfterEach
  void close() {
    if (controller != null) {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
    logged.close();
    hooks.close();
    hook.close();
  }

  @Test
  void eachSyncIsLoggedWithTheCausesItsHostGaveIt() {
    ControllerContext context = context(Sharding.disabled(), THINGS, CONFIG_MAPS);
    KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "a", "namespace": "team", "uid": "a-uid", "generation": 1, "resourceVersion": "7"},
         "spec": {}}"""));
    informers.of(THINGS).put(parent);
    controller = CompositeController.kind().factory().create(compositeController(), context);
    controller.start().subscribe();
    await().until(() -> controller.phase() == HostedController.Phase.RUNNING);
    await().atMost(Duration.ofSeconds(10)).until(() -> !logged.causes().isEmpty());
    assertThat(logged.causes().get(0)).as("the parent the caches held when the controller started")
        .containsExactly(Trigger.Cause.START);

    ObjectNode edited = parent.toTree();
    ((ObjectNode) edited.get("metadata")).put("generation", 2).put("resourceVersion", "8");
    KubeObject next = KubeObject.of(edited);
    failing.set(true);
    informers.of(THINGS).put(next).deliver(updated(parent, next));
    // Coalesced with the resync period's adds when they come together.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(logged.causes())
        .anySatisfy(causes -> assertThat(causes).as("the edit's sync").contains(Trigger.Cause.SPEC))
        .anySatisfy(causes -> assertThat(causes).as("the sync after the failed one")
            .contains(Trigger.Cause.RETRY_FAILED))
        .contains(List.of(Trigger.Cause.RESYNC_PERIOD)));
    assertThat(logged.syncs()).first().extracting(ILoggingEvent::getFormattedMessage)
        .isEqualTo("CompositeController things: syncing team/a because: controller started");

    SyncHistory.Syncs ring = history.parent(ParentRef.of("CompositeController", "things", "team", "a"));
    assertThat(ring).as("the parent's kept syncs").isNotNull();
    SyncEntry first = ring.syncs().get(0);
    assertThat(first.causes()).extracting(Trigger::cause).containsExactly(Trigger.Cause.START);
    assertThat(first.outcome()).isEqualTo("success");
    assertThat(first.error()).isNull();
    assertThat(first.hookCalls()).isEqualTo(1);
    assertThat(first.hookMicros()).isPositive();
    assertThat(first.answerBytes()).as("the answer's body").isGreaterThan(50);
    assertThat(first.writes()).extracting(SyncEntry.Write::verb, SyncEntry.Write::kind, SyncEntry.Write::name)
        .contains(tuple("create", "ConfigMap", "a-0"));
    // Kept when a sync ends, a little after its log line.
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
        history.parent(ParentRef.of("CompositeController", "things", "team", "a")).syncs()).anySatisfy(sync -> {
      assertThat(sync.causes()).extracting(Trigger::cause).as("the edit's sync").contains(Trigger.Cause.SPEC);
      assertThat(sync.outcome()).isEqualTo("failed");
      assertThat(sync.error()).contains("children");
    }).anySatisfy(sync -> assertThat(sync.causes()).extracting(Trigger::cause).contains(Trigger.Cause.RETRY_FAILED))
        .anySatisfy(sync -> assertThat(sync.causes()).extracting(Trigger::cause)
            .containsExactly(Trigger.Cause.RESYNC_PERIOD)));
  }

  /**
   * A MapController's input changed: its parent's next sync is kept in the parent's ring with the input named as
   * its cause (MapRouter's {@code input changed: ConfigMap team/in (updated)}).
   */
  @Test
  void aMapInputChangeIsKeptInItsParentsRingNamingTheInput() {
    HookServer map = HookServer.builder().route("/map", request -> {
      ObjectNode answer = KubeJson.nodes().objectNode();
      answer.putArray("outputs").addObject().put("apiVersion", OUTPUTS.apiVersion()).put("kind", OUTPUTS.kind())
          .putObject("metadata").put("name", "a-in");
      return answer;
    }).start();
    try {
      ControllerContext context = context(Sharding.disabled(), THINGS, CONFIG_MAPS, OUTPUTS);
      informers.of(THINGS).put(object(THINGS, "team", "a").field("spec", "{\"selector\": {\"matchLabels\":"
          + " {\"team\": \"x\"}}}").build());
      KubeObject input = object(CONFIG_MAPS, "team", "in").label("team", "x").field("data", "{\"v\": \"1\"}")
          .build();
      informers.of(CONFIG_MAPS).put(input);
      controller = MapController.kind().factory().create(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
          {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "MapController",
           "metadata": {"name": "maps", "uid": "controller-uid"},
           "spec": {"parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                    "inputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                    "outputResources": [{"apiVersion": "test.metareactor.dev/v1", "resource": "outputs"}],
                    "hooks": {"map": {"webhook": {"url": "%s"}}}}}""".formatted(map.url("/map")))), context);
      controller.start().subscribe();
      await().until(() -> controller.phase() == HostedController.Phase.RUNNING);
      ParentRef parent = ParentRef.of("MapController", "maps", "team", "a");
      await().atMost(Duration.ofSeconds(10)).until(() -> history.parent(parent) != null);

      KubeObject changed = nextVersionOf(input).field("data", "{\"v\": \"2\"}").build();
      informers.of(CONFIG_MAPS).put(changed).deliver(updated(input, changed));
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(history.parent(parent).syncs())
          .anySatisfy(sync -> {
            assertThat(sync.causes()).contains(
                Trigger.about(Trigger.Cause.MAP_INPUT, Trigger.Change.UPDATED, "ConfigMap", "team", "in"));
            assertThat(sync.outcome()).isEqualTo("success");
            assertThat(sync.hookCalls()).isEqualTo(1);
          }));
    } finally {
      map.close();
    }
  }

  /**
   * With {@code --sharding}, a parent of this replica's share that another shard owns once it joins (a membership
   * change) is synced again to be moved there: that sync is kept in the parent's ring as leaving (the new owner's
   * first sync of it is kept as a move to its shard: ShardParticipantTest, ShardingIT).
   */
  @Test
  void aShardMoveIsKeptInTheMovedParentsRing() {
    AtomicLong now = new AtomicLong();
    Membership membership = new Membership("a", Duration.ofSeconds(15), now::get);
    ShardAssigner assigner = new ShardAssigner(api, informers, membership, shard -> Mono.just(false), Duration.ZERO,
        Schedulers.immediate(), new SimpleMeterRegistry());
    try {
      ControllerContext context = context(Sharding.of(membership, assigner), THINGS, CONFIG_MAPS);
      // A parent of shard a's that shard c owns once it is there.
      String uid = IntStream.iterate(0, i -> i + 1).mapToObj(i -> "uid-" + i)
          .filter(candidate -> "c".equals(Rendezvous.owner(candidate, List.of("a", "c")))).findFirst().orElseThrow();
      informers.of(THINGS).put(object(THINGS, "team", "a").uid(uid)
          .label(ShardKeys.ownerLabel("CompositeController", "things"), "a").field("spec", "{}").build());
      controller = CompositeController.kind().factory().create(compositeController(), context);
      controller.start().subscribe();
      await().until(() -> controller.phase() == HostedController.Phase.RUNNING);
      ParentRef parent = ParentRef.of("CompositeController", "things", "team", "a");
      await().atMost(Duration.ofSeconds(10)).until(() -> history.parent(parent) != null);

      membership.observe(object(LEASES, "team", "lease-c").label(ShardKeys.SHARD, "c")
          .field("spec", "{\"holderIdentity\":\"c_1\",\"renewTime\":\"t\"}").build());
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(history.parent(parent).syncs())
          .anySatisfy(sync -> assertThat(sync.causes()).containsExactly(Trigger.of(Trigger.Cause.SHARD_LEAVING))));
    } finally {
      assigner.close();
    }
  }

  /** A context over the fakes, with {@code sharding}, discovering {@code resources}. */
  private ControllerContext context(Sharding sharding, ApiResource... resources) {
    // The writes wrapped as the engine wraps them, for the ring of recent syncs to see them.
    return new ControllerContext(EngineCommand.parse(), new FixedDiscovery(resources), informers,
        new SyncRecordingApi(api), new EventRecorder(api, new RateLimit(100, 100),
            Scheduling.production().wallClock(), "test"),
        hooks, new SimpleMeterRegistry(), Scheduling.production(), sharding, WriteFence.OPEN, Tracing.OFF, history);
  }

  /** CompositeController {@code things} of Things with ConfigMap children, resynced every second, and the hook. */
  private KubeObject compositeController() {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "uid": "controller-uid"},
         "spec": {"generateSelector": true, "resyncPeriodSeconds": 1,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": {"webhook": {"url": "%s"}}}}}""".formatted(hook.url("/sync"))));
  }
}
