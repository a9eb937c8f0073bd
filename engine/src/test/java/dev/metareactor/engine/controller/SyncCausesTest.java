package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * The causes a hosted controller's own enqueue sites give, in the middle tier (a real CompositeController over
 * in-memory informers and API, a real hook): the caches' initial list when it starts, a parent's event, the
 * {@code resyncPeriodSeconds} timer and a retry after a failed sync. Each sync's causes reach the worker, which logs
 * them at debug ({@link SyncRunner}); the routers' own causes are their tests'.
 */
class SyncCausesTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final AtomicBoolean failing = new AtomicBoolean();
  private final HookServer hook = HookServer.builder().route("/sync", request -> {
    ObjectNode answer = KubeJson.nodes().objectNode();
    if (failing.getAndSet(false)) {
      return answer.put("children", "not a list"); // refused: the sync fails
    }
    answer.putObject("status").put("synced", true);
    answer.putArray("children");
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
  }

  @Test
  void eachSyncIsLoggedWithTheCausesItsHostGaveIt() {
    ControllerContext context = new ControllerContext(EngineCommand.parse(), new FixedDiscovery(THINGS, CONFIG_MAPS),
        informers, api, new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"),
        hooks, new SimpleMeterRegistry(), Scheduling.production(), Sharding.disabled(), WriteFence.OPEN);
    KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "a", "namespace": "team", "uid": "a-uid", "generation": 1, "resourceVersion": "7"},
         "spec": {}}"""));
    informers.of(THINGS).put(parent);
    controller = CompositeController.kind().factory().create(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "uid": "controller-uid"},
         "spec": {"generateSelector": true, "resyncPeriodSeconds": 1,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": {"webhook": {"url": "%s"}}}}}""".formatted(hook.url("/sync")))), context);
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
  }
}
