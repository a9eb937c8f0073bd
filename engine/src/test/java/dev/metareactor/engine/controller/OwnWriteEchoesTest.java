package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ForwardingObjectApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.Causes;
import dev.metareactor.engine.queue.KeyedWorkQueue;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The syncs a parent's own writes cause, in the middle tier (a real CompositeController over in-memory informers and
 * API, a real hook): the informer events of what its first sync wrote — its children created and its status — come
 * back as the echoes they are ({@link OwnWrites}) and make one more sync together, in which the hook sees its
 * children; nothing about them is a change, so none of them runs the parent at once. Counts of syncs and their
 * causes, never a time.
 */
class OwnWriteEchoesTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private final RecordingApi recording = new RecordingApi();
  /** Gives a status write what the API server gives it: the status kept and a new resourceVersion. */
  private final ObjectApi api = new ForwardingObjectApi(recording) {
    private final AtomicLong versions = new AtomicLong(1000);

    @Override
    public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
        JsonNode body) {
      return delegate().patchStatus(resource, namespace, name, type, body).map(kept -> {
        ObjectNode stored = kept.object().toTree();
        for (JsonNode operation : body) {
          if (operation.path("path").asString("").equals("/status")) {
            stored.set("status", operation.get("value"));
          }
        }
        ((ObjectNode) stored.get("metadata")).put("resourceVersion", Long.toString(versions.incrementAndGet()));
        recording.holding(resource, stored);
        return new Written(KubeJson.bytes(stored));
      });
    }
  };
  private final FakeInformers informers = new FakeInformers();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final AtomicInteger hookCalls = new AtomicInteger();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  /** Delays (the echo window) pass only when the test says: what coalesces does not depend on the machine's speed. */
  private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
  private final Scheduling scheduling = new Scheduling(time, Schedulers.boundedElastic(),
      () -> time.now(TimeUnit.NANOSECONDS), Clock.systemUTC());
  /** Answers 3 ConfigMaps per parent and a status counting the children it was shown. */
  private final HookServer hook = HookServer.builder().route("/sync", request -> {
    hookCalls.incrementAndGet();
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("status").put("children", request.path("children").path("ConfigMap.v1").size());
    var children = answer.putArray("children");
    String parent = request.path("parent").path("metadata").path("name").asString();
    for (int i = 0; i < 3; i++) {
      ObjectNode child = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      child.putObject("metadata").put("name", parent + "-" + i);
      child.putObject("data").put("value", "v");
    }
    return answer;
  }).start();
  private final LoggedSyncCauses logged = new LoggedSyncCauses();
  private HostedController controller;

  @AfterEach
  void close() {
    if (controller != null) {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
    logged.close();
    hooks.close();
    hook.close();
    time.dispose();
  }

  private long writes(String verb) {
    return recording.actions().stream().filter(action -> action.verb().equals(verb)).count();
  }

  @Test
  void theEchoesOfAParentsFirstSyncMakeOneMoreSyncTogetherInWhichTheHookSeesItsChildren() {
    ControllerContext context = new ControllerContext(EngineCommand.parse(), new FixedDiscovery(THINGS, CONFIG_MAPS),
        informers, api, new EventRecorder(recording, new RateLimit(100, 100), Scheduling.production().wallClock(),
        "test"), hooks, meters, scheduling, Sharding.disabled(), WriteFence.OPEN);
    KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "a", "namespace": "team", "uid": "a-uid", "generation": 1, "resourceVersion": "7"},
         "spec": {}}"""));
    informers.of(THINGS).put(parent);
    recording.holding(THINGS, parent);
    controller = CompositeController.kind().factory().create(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "uid": "controller-uid"},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps", "updateStrategy":
                      {"method": "InPlace"}}],
                  "hooks": {"sync": {"webhook": {"url": "%s"}}}}}""".formatted(hook.url("/sync")))), context);
    controller.start().subscribe();
    // Time passes until the first sync (what the controller's start waits for) and not after it.
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10)).until(() -> {
      time.advanceTimeBy(Duration.ofMillis(100));
      return syncsEnded() == 1;
    });
    assertThat(writes("create")).isEqualTo(3);
    assertThat(writes("patch-status")).isEqualTo(1);

    // What the first sync wrote comes back, as a watch brings it: the children created, then the status.
    recording.objects(CONFIG_MAPS).forEach(child -> informers.of(CONFIG_MAPS).deliver(added(child)));
    KubeObject written = recording.object(THINGS, "team", "a").orElseThrow();
    informers.of(THINGS).deliver(updated(parent, written));

    assertThat(syncsEnded()).as("every echo waits for the echo window").isEqualTo(1);
    time.advanceTimeBy(KeyedWorkQueue.ECHO_WINDOW);
    await().atMost(Duration.ofSeconds(10)).until(() -> syncsEnded() == 2);
    time.advanceTimeBy(Duration.ofSeconds(10));
    assertThat(logged.causes()).as("the first sync, then one for all its echoes").hasSize(2);
    assertThat(logged.causes().get(1)).as("the status written came back as an echo, not as a status change")
        .containsOnly(Trigger.Cause.ECHO).hasSize(Causes.MAX_KEPT);
    assertThat(hookCalls).hasValue(2);
    assertThat(recording.object(THINGS, "team", "a").orElseThrow().toTree().path("status").path("children").asInt())
        .as("the hook saw its 3 children in the second sync").isEqualTo(3);
  }

  /** How many syncs have ended, however. */
  private double syncsEnded() {
    return meters.find("controller_runtime.reconcile").counters().stream().mapToDouble(c -> c.count()).sum();
  }
}
