package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentEvents;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
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
  /** What the hook answers, whole (sync and finalize alike). */
  private final AtomicReference<String> answer = new AtomicReference<>("{}");
  /** The Events the syncs recorded, {@code <object>: <type> <reason> <message>} each. */
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final ObjectSync<TargetKey> sync;

  DecoratorSyncTest() {
    sync = wired(false, false);
    services.put(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "web", "namespace": "team", "uid": "web-uid", "resourceVersion": "3",
                      "labels": {"decorate": "yes", "tier": "front"}, "annotations": {"owner": "ops"}},
         "spec": {}, "status": {"seen": true}}""")));
  }

  /**
   * The DecoratorController {@code tagger} of Services labelled {@code decorate=yes}, attaching ConfigMaps.
   *
   * @param deleteGuard whether it carries {@code metareactor.dev/delete-guard: "true"}
   * @param finalize whether it has a finalize hook
   */
  private ObjectSync<TargetKey> wired(boolean deleteGuard, boolean finalize) {
    ObjectNode controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "DecoratorController",
         "metadata": {"name": "tagger", "annotations": {"metareactor.dev/delete-guard": "%s"}},
         "spec": {"resources": [{"apiVersion": "v1", "resource": "services",
                                 "labelSelector": {"matchLabels": {"decorate": "yes"}}}],
                  "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}%s}}}"""
        .formatted(deleteGuard, finalize ? ", \"finalize\": {\"webhook\": {\"url\": \"http://hook.invalid/f\"}}" : ""));
    DecoratorControllerSpec spec = DecoratorControllerSpec.parse(controller);
    Finalizers finalizers = new Finalizers(spec.finalizerName(), api);
    DecoratorControllerSpec.Target rule = spec.targets().get(0);
    TargetType type = new TargetType(new SyncedResource(SERVICES, services,
        target -> DecoratorRouter.selected(rule, target), finalizers), rule);
    DecoratorSync kind = new DecoratorSync(spec, List.of(type),
        List.of(new ChildType(CONFIG_MAPS, configMaps, spec.attachments().get(0).updateMethod())), api);
    HookCaller caller = (request, root) -> Mono.just(KubeJson.mapper().readTree(answer.get()));
    ObjectSync.ChosenHook hook = new ObjectSync.ChosenHook("sync", caller, spec.syncHook().get());
    ObjectSync.ChosenHook finalizeHook = finalize
        ? new ObjectSync.ChosenHook("finalize", caller, spec.finalizeHook().orElseThrow()) : null;
    ParentEvents recorded = (object, eventType, reason, message) ->
        events.add(object.name() + ": " + eventType + " " + reason + " " + message);
    return new ObjectSync<>(kind, DecoratorSync.SHAPE, "DecoratorController tagger", controller,
        new ObjectSync.Hooks(hook, finalizeHook),
        new RelatedObjects<>("DecoratorController", "tagger", controller, null, Optional.empty(), null, key -> {}),
        new ChildrenManager(api, ChildApplier.of(ApplyStrategy.DYNAMIC_APPLY, api, "metacontroller"), recorded),
        finalizers, recorded);
  }

  private void run(String hookAnswer) {
    run(sync, hookAnswer);
  }

  private void run(ObjectSync<TargetKey> wired, String hookAnswer) {
    answer.set(hookAnswer);
    wired.sync(new TargetKey(SERVICES, "team", "web")).block(Duration.ofSeconds(5));
  }

  /** Caches an attachment of {@code web} that this decorator made. */
  private void attachment(String name) {
    configMaps.put(object(CONFIG_MAPS, "team", name).annotation(DecoratorSync.DECORATOR_ANNOTATION, "tagger")
        .controlledBy(services.get("team", "web").orElseThrow()).build());
  }

  private static String attachments(String... names) {
    return "[" + String.join(", ", Stream.of(names).map(name -> """
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s"}}""".formatted(name)).toList()) + "]";
  }

  private List<String> requests() {
    return api.actions().stream().map(RecordingApi.Action::toString).toList();
  }

  @Test
  void anAnswerWithoutAttachmentsDeletesThemAsMetacontrollerDoesWithAMissingChildrenWarning() {
    attachment("a");
    attachment("b");

    run("{\"labels\": {\"tier\": \"front\"}}");

    assertThat(requests()).containsExactlyInAnyOrder("delete configmaps team/a", "delete configmaps team/b");
    assertThat(events).containsExactly("web: Warning MissingChildren the sync answer has no \"attachments\" (absent"
        + " or null, not []): deleting all 2 observed, as Metacontroller does; annotate the controller"
        + " metareactor.dev/delete-guard=true to refuse such answers");
  }

  @Test
  void underTheDeleteGuardAnAnswerWithoutAttachmentsOrDroppingMostIsRefusedWhole() {
    ObjectSync<TargetKey> guarded = wired(true, false);
    attachment("a");
    attachment("b");
    attachment("c");

    assertThatThrownBy(() -> run(guarded, "{\"labels\": {\"tier\": \"back\"}, \"attachments\": null}"))
        .isInstanceOf(HookResponseException.class)
        .hasMessageContaining("the answer has no \"attachments\" (absent or null, not []), which would delete all 3");
    assertThatThrownBy(() -> run(guarded, "{\"labels\": {\"tier\": \"back\"}, \"attachments\": "
        + attachments("a") + "}"))
        .hasMessageContaining("would delete 2 of the 3 observed attachments at once, more than half");
    assertThat(requests()).as("not even the labels").isEmpty();
    assertThat(events).isEmpty();

    run(guarded, "{\"attachments\": " + attachments("a", "b") + "}");
    assertThat(requests()).containsExactly("delete configmaps team/c");
  }

  @Test
  void aFinalizeAnswerMayDropEveryAttachmentUnderTheDeleteGuard() {
    ObjectSync<TargetKey> guarded = wired(true, true);
    services.put(object(SERVICES, "team", "web").uid("web-uid").label("decorate", "no")
        .finalizer("metacontroller.io/decoratorcontroller-tagger").build());
    attachment("a");
    attachment("b");

    run(guarded, "{\"finalized\": false}");

    assertThat(requests()).as("tearing down is what a finalize hook is for")
        .containsExactlyInAnyOrder("delete configmaps team/a", "delete configmaps team/b");
    assertThat(events).isEmpty();
  }

  @Test
  void labelsAnnotationsAndStatusAlreadyAsAnsweredMakeNoRequest() {
    run("""
        {"labels": {"tier": "front"}, "annotations": {"owner": "ops"}, "status": {"seen": true}, "attachments": []}""");

    assertThat(api.actions()).isEmpty();
  }

  @Test
  void aStatusIsNeverWrittenOverATargetCreatedAgainUnderItsName() {
    // The cache still shows web-uid; the API server has a new Service of the name.
    api.holding(SERVICES, object(SERVICES, "team", "web").uid("web-uid-2").build());

    run("""
        {"status": {"seen": false}, "attachments": []}""");

    assertThat(requests()).as("the write, refused (422), and one read that shows the namesake")
        .containsExactly("patch-status services team/web", "get services team/web");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(0).body());
    assertThat(patch.get(0).path("op").asString()).isEqualTo("test");
    assertThat(patch.get(0).path("path").asString()).isEqualTo("/metadata/uid");
    assertThat(patch.get(0).path("value").asString()).isEqualTo("web-uid");
    assertThat(events).isEmpty();
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
  void keysUnderTheEnginesShardPrefixAndTheEnginesOwnAnnotationAreTheEnginesWhateverTheHookAnswers() {
    run("""
        {"labels": {"shard.metareactor.dev/dec.tagger": "elsewhere", "tier": "back"},
         "annotations": {"shard.metareactor.dev/x": null},
         "attachments": [{"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "web-tags", "labels": {"shard.metareactor.dev/cc.other": "s9"},
                        "annotations": {"%s": "someone-else", "shard.metareactor.dev/note": "x"}}}]}"""
        .formatted(DecoratorSync.DECORATOR_ANNOTATION));

    assertThat(api.actions()).extracting(RecordingApi.Action::toString)
        .containsExactlyInAnyOrder("create configmaps team/web-tags", "patch services team/web");
    String patch = api.actions().stream().filter(action -> action.verb().equals("patch")).findFirst().orElseThrow()
        .body();
    assertThat(patch).contains("\"tier\":\"back\"").doesNotContain("shard.metareactor.dev");
    String created = api.actions().stream().filter(action -> action.verb().equals("create")).findFirst()
        .orElseThrow().body();
    assertThat(created).contains("\"" + DecoratorSync.DECORATOR_ANNOTATION + "\":\"tagger\"")
        .doesNotContain("someone-else").doesNotContain("shard.metareactor.dev");
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
