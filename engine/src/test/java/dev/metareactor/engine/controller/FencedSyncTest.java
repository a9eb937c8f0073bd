package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * A hosted controller asks the {@link dev.metareactor.engine.kube.WriteFence} before every sync, in the middle tier:
 * a real CompositeController over in-memory informers and API, a real hook client and hook. While the fence refuses
 * (this replica's lease is gone by its own clock), a sync calls no hook and writes nothing; once it lets, the parent
 * is synced.
 */
class FencedSyncTest {

  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final AtomicInteger hookCalls = new AtomicInteger();
  private final HookServer hook = HookServer.builder().route("/sync", request -> {
    hookCalls.incrementAndGet();
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("status").put("synced", true);
    ObjectNode child = answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
    child.putObject("metadata").put("name", "child");
    return answer;
  }).start();
  /** The fence's answer; asked counts the questions. */
  private final AtomicReference<String> refusal = new AtomicReference<>("the lease was last renewed 25 s ago");
  private final AtomicInteger asked = new AtomicInteger();
  private HostedController controller;

  @AfterEach
  void close() {
    if (controller != null) {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
    hooks.close();
    hook.close();
  }

  @Test
  void aSyncThatTheFenceRefusesCallsNoHookAndWritesNothingUntilItLets() {
    ControllerContext context = new ControllerContext(EngineCommand.parse(),
        new FixedDiscovery(HostedThings.THINGS, HostedThings.CONFIG_MAPS),
        informers, api, new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"),
        hooks, new SimpleMeterRegistry(), Scheduling.production(), Sharding.disabled(), () -> {
          asked.incrementAndGet();
          return refusal.get();
        });
    controller = HostedThings.started(context, hook.url("/sync"));

    HostedThings.addParent(informers);
    // Asked again and again: each refused sync is retried after the key's backoff.
    await().atMost(Duration.ofSeconds(10)).until(() -> asked.get() >= 3);
    assertThat(hookCalls).as("hook calls while the fence refuses").hasValue(0);
    assertThat(api.actions()).as("requests while the fence refuses").isEmpty();

    refusal.set(null);
    await().atMost(Duration.ofSeconds(10)).until(() -> api.actions().stream()
        .anyMatch(action -> action.verb().equals("create") && action.name().equals("child")));
    assertThat(hookCalls.get()).isPositive();
  }
}
