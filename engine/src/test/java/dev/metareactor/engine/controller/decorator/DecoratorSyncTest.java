package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.List;
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

  private static final ApiResource SERVICES = DecoratorSyncFixture.SERVICES;

  private final DecoratorSyncFixture fixture = new DecoratorSyncFixture();
  private final RecordingApi api = fixture.api;
  private final FakeInformerLease services = fixture.services;
  /** What the hook answers, whole (sync and finalize alike). */
  private final AtomicReference<String> answer = new AtomicReference<>("{}");
  /** The Events the syncs recorded, {@code <object>: <type> <reason> <message>} each. */
  private final List<String> events = fixture.events;
  private final ObjectSync<TargetKey> sync = wired(false, false);

  /**
   * The DecoratorController {@code tagger} ({@link DecoratorSyncFixture}), answering {@link #answer}.
   *
   * @param deleteGuard whether it carries {@code metareactor.dev/delete-guard: "true"}
   * @param finalize whether it has a finalize hook
   */
  private ObjectSync<TargetKey> wired(boolean deleteGuard, boolean finalize) {
    return fixture.sync((request, root) -> Mono.just(KubeJson.mapper().readTree(answer.get())), deleteGuard,
        finalize);
  }

  private void run(String hookAnswer) {
    run(sync, hookAnswer);
  }

  private void run(ObjectSync<TargetKey> wired, String hookAnswer) {
    answer.set(hookAnswer);
    DecoratorSyncFixture.run(wired);
  }

  private void attachment(String name) {
    fixture.attachment(name);
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
  void theFinalizeHookIsKnownByItsPurposeNotItsName() {
    List<JsonNode> hookRequests = new CopyOnWriteArrayList<>();
    ObjectSync<TargetKey> wired = fixture.syncFinalizingWith((request, root) -> {
      hookRequests.add(request);
      return Mono.just(KubeJson.mapper().readTree("{\"finalized\": true}"));
    }, "teardown");
    services.put(object(SERVICES, "team", "web").uid("web-uid").label("decorate", "no")
        .finalizer("metacontroller.io/decoratorcontroller-tagger").build());

    DecoratorSyncFixture.run(wired);

    assertThat(hookRequests).singleElement().extracting(request -> request.path("finalizing").asBoolean())
        .isEqualTo(true);
    assertThat(requests()).as("the finalizer removed once the finalize hook said finalized")
        .containsExactly("patch services team/web");
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
  void labelsAreNeverWrittenOverATargetCreatedAgainUnderItsName() {
    // The cache still shows web-uid; the API server has a new Service of the name.
    api.holding(SERVICES, object(SERVICES, "team", "web").uid("web-uid-2").build());

    run("""
        {"labels": {"tier": "back"}, "status": {"seen": true}, "attachments": []}""");

    assertThat(requests()).as("the labels' patch, refused (422), one read that shows the namesake; no status")
        .containsExactly("patch services team/web", "get services team/web");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(0).body());
    assertThat(patch.path("metadata").path("uid").asString()).isEqualTo("web-uid");
    assertThat(events).isEmpty();
  }

  @Test
  void labelsTheApiServerRefusesForTheTargetItselfFailTheSync() {
    api.holding(SERVICES, object(SERVICES, "team", "web").uid("web-uid").build());
    api.refusingNext("patch", 422, "Invalid");

    assertThatThrownBy(() -> run("""
        {"labels": {"tier": "-bad-"}, "attachments": []}"""))
        .hasMessageContaining("can't update labels and annotations: patch refused: 422 Invalid");
    assertThat(requests()).containsExactly("patch services team/web", "get services team/web");
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
