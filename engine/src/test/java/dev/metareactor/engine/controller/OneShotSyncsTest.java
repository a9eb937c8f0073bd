package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.preview.Preview;
import dev.metareactor.engine.preview.PreviewReport;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.testing.FakeInformerLease;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One-shot syncs ({@code metareactor preview}) of a CompositeController with a customize hook, in the middle tier: a
 * real controller over in-memory informers and API, a real hook client and hooks. The related informer the first
 * sync starts may not have synced yet: the sync waits for it (within its patience) instead of failing, and a sync
 * that fails says why.
 */
class OneShotSyncsTest {

  private static final ApiResource SECRETS = new ApiResource("", "v1", "secrets", "Secret", true, Set.of());

  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  /** The {@code related} map of the last sync request. */
  private final AtomicReference<@Nullable JsonNode> related = new AtomicReference<>();
  private final HookServer hook = HookServer.builder()
      .route("/customize", request -> (ObjectNode) KubeJson.mapper().readTree("""
          {"relatedResources": [{"apiVersion": "v1", "resource": "secrets"}]}"""))
      .route("/sync", request -> {
        related.set(request.path("related"));
        ObjectNode answer = KubeJson.nodes().objectNode();
        answer.putObject("status").put("secrets", request.path("related").path("Secret.v1").size());
        return answer;
      })
      .start();
  private @Nullable HostedController controller;

  @AfterEach
  void close() {
    if (controller != null) {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
    hooks.close();
    hook.close();
  }

  @Test
  void aSyncWhoseRelatedInformerSyncsLateWaitsForItAndSeesTheRelatedObjects() throws Exception {
    FakeInformerLease secrets = informers.of(SECRETS).synced(false)
        .put(object("v1", "Secret", "team", "shared", "s-uid"));
    OneShot.Unit parent = oneParent();

    CompletableFuture<OneShot.Synced> ended = parent.sync(Duration.ofSeconds(30)).toFuture();
    // The first run found the related informer filling its cache; it is run again, not reported failed.
    await().atMost(Duration.ofSeconds(10)).until(() -> secrets.syncedAsked() >= 2);
    assertThat(ended).as("a sync whose related informer has not synced yet").isNotDone();

    secrets.synced(true);
    OneShot.Synced synced = ended.get();
    assertThat(synced.outcome()).isEqualTo(Outcome.success());
    assertThat(synced.failure()).isNull();
    assertThat(related.get()).as("the related objects the sync hook was shown").isNotNull();
    assertThat(related.get().path("Secret.v1").propertyNames()).containsExactly("shared");
  }

  @Test
  void aSyncWhoseRelatedInformerNeverSyncsFailsAndThePreviewSaysWhy() {
    informers.of(SECRETS).synced(false);
    OneShot.Unit parent = oneParent();

    OneShot.Synced synced = parent.sync(Duration.ofMillis(200)).block(Duration.ofSeconds(10));

    assertThat(synced.outcome()).isEqualTo(Outcome.failed());
    assertThat(synced.failure()).isEqualTo("the informer of related secrets/v1 in team has not synced yet");
    Preview.Result result = new Preview.Result("CompositeController", "things", 1, List.of(new Preview.ParentResult(
        parent, parent.object().orElse(null), synced.outcome(), synced.failure(), List.of(), List.of())));
    assertThat(PreviewReport.text(result, false))
        .contains("Thing team/a: sync failed: the informer of related secrets/v1 in team has not synced yet");
    assertThat(PreviewReport.tree(result).path("parents").path(0).path("error").asString())
        .isEqualTo("the informer of related secrets/v1 in team has not synced yet");
  }

  /** Begins the controller for one-shot syncs, with parent {@code team/a} cached, and gives its one unit. */
  private OneShot.Unit oneParent() {
    informers.of(HostedThings.THINGS).put(object("test.metareactor.dev/v1", "Thing", "team", "a", "a-uid"));
    ControllerContext context = new ControllerContext(EngineCommand.parse(),
        new FixedDiscovery(HostedThings.THINGS, HostedThings.CONFIG_MAPS, SECRETS), informers, api,
        new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"), hooks,
        new SimpleMeterRegistry(), Scheduling.production());
    HostedController made = CompositeController.kind().factory().create(KubeObject.of((ObjectNode) KubeJson
        .mapper().readTree("""
            {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
             "metadata": {"name": "things", "uid": "controller-uid"},
             "spec": {"generateSelector": true,
                      "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                      "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                      "hooks": {"sync": {"webhook": {"url": "%s"}},
                                "customize": {"webhook": {"url": "%s"}}}}}""".formatted(hook.url("/sync"),
            hook.url("/customize")))), context);
    controller = made;
    OneShot oneShot = made.startOneShot().block(Duration.ofSeconds(10));
    assertThat(oneShot).isNotNull();
    assertThat(oneShot.units()).hasSize(1);
    return oneShot.units().get(0);
  }

  private static KubeObject object(String apiVersion, String kind, String namespace, String name, String uid) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "%s", "kind": "%s",
         "metadata": {"name": "%s", "namespace": "%s", "uid": "%s", "generation": 1, "resourceVersion": "7"}}"""
        .formatted(apiVersion, kind, name, namespace, uid)));
  }
}
