package dev.metareactor.engine.controller.decorator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A DecoratorController's sync in the middle tier (see {@code CompositeSyncTest}): labels and annotations merged key by
 * key and written only when they change, its status likewise, and nothing at all for a target that matches.
 */
class DecoratorSyncTest {

  private static final ApiResource SERVICES = new ApiResource("", "v1", "services", "Service", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private final RecordingApi api = new RecordingApi();
  private final FakeInformerLease services = new FakeInformerLease(SERVICES);
  private final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  /** What the hook answers, whole. */
  private final AtomicReference<String> answer = new AtomicReference<>("{}");
  private final ObjectSync<TargetKey> sync;

  DecoratorSyncTest() {
    ObjectNode controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "DecoratorController",
         "metadata": {"name": "tagger"},
         "spec": {"resources": [{"apiVersion": "v1", "resource": "services",
                                 "labelSelector": {"matchLabels": {"decorate": "yes"}}}],
                  "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}}}}""");
    DecoratorControllerSpec spec = DecoratorControllerSpec.parse(controller);
    Finalizers finalizers = new Finalizers(spec.finalizerName(), api);
    DecoratorControllerSpec.Target rule = spec.targets().get(0);
    TargetType type = new TargetType(new SyncedResource(SERVICES, services,
        target -> DecoratorRouter.selected(rule, target), finalizers), rule);
    DecoratorSync kind = new DecoratorSync(spec, List.of(type),
        List.of(new ChildType(CONFIG_MAPS, configMaps, spec.attachments().get(0).updateMethod())), api);
    ObjectSync.ChosenHook hook = new ObjectSync.ChosenHook("sync",
        (request, root) -> Mono.just(KubeJson.mapper().readTree(answer.get())), spec.syncHook().get());
    sync = new ObjectSync<>(kind, DecoratorSync.SHAPE, "DecoratorController tagger", controller,
        new ObjectSync.Hooks(hook, null),
        new RelatedObjects<>("DecoratorController", "tagger", controller, null, Optional.empty(), null, key -> {}),
        new ChildrenManager(api,
            ChildApplier.of(ApplyStrategy.DYNAMIC_APPLY, api, "metacontroller"),
            (object, eventType, reason, message) -> { }), finalizers,
        (object, eventType, reason, message) -> { });
    services.put(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "web", "namespace": "team", "uid": "web-uid", "resourceVersion": "3",
                      "labels": {"decorate": "yes", "tier": "front"}, "annotations": {"owner": "ops"}},
         "spec": {}, "status": {"seen": true}}""")));
  }

  private void run(String hookAnswer) {
    answer.set(hookAnswer);
    sync.sync(new TargetKey(SERVICES, "team", "web")).block(Duration.ofSeconds(5));
  }

  @Test
  void labelsAnnotationsAndStatusAlreadyAsAnsweredMakeNoRequest() {
    run("""
        {"labels": {"tier": "front"}, "annotations": {"owner": "ops"}, "status": {"seen": true}, "attachments": []}""");

    assertThat(api.actions()).isEmpty();
  }

  @Test
  void onlyTheKeysThatChangeArePatchedAndNullRemovesOne() {
    run("""
        {"labels": {"tier": "back", "decorate": "yes"}, "annotations": {"owner": null}, "attachments": []}""");

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("patch services team/web");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(0).body());
    assertThat(patch.path("metadata").path("labels").properties()).hasSize(1);
    assertThat(patch.path("metadata").path("labels").path("tier").asString()).isEqualTo("back");
    assertThat(patch.path("metadata").path("annotations").get("owner").isNull()).isTrue();
  }

  @Test
  void anAttachmentIsCreatedAnnotatedAndOwned() {
    run("""
        {"attachments": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-tags"}}]}""");

    assertThat(api.actions()).extracting(RecordingApi.Action::toString)
        .containsExactly("create configmaps team/web-tags");
    assertThat(api.actions().get(0).body()).contains("\"" + DecoratorSync.DECORATOR_ANNOTATION + "\":\"tagger\"")
        .contains("\"uid\":\"web-uid\"");
  }

  @Test
  void aTargetTheSelectorsNoLongerMatchIsNotSynced() {
    services.put(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "team", "uid": "web-uid",
         "resourceVersion": "4", "labels": {"decorate": "no"}}}""")));

    run("""
        {"labels": {"tier": "back"}}""");

    assertThat(api.actions()).isEmpty();
  }
}
