package dev.metareactor.engine.controller.composite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.ChildStatusAnnotation;
import dev.metareactor.engine.api.DeleteParentAnnotation;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildOrder;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.testing.RecordingApi;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A CompositeController's sync in the middle tier ({@link CompositeSyncFixture}): the real {@link ObjectSync},
 * {@link CompositeSync}, claimer, children manager and finalizers over in-memory informer caches, an API that records
 * every request and a hook as a lambda. No cluster; milliseconds.
 */
class CompositeSyncTest {

  private static final String PARENT_UID = "parent-uid";
  private static final String SHARD_LABEL = "shard.metareactor.dev/cc.things";

  /** What the hook answers: its children's {@code data.value}. */
  private final AtomicReference<String> value = new AtomicReference<>("one");
  private final AtomicReference<String> childName = new AtomicReference<>("child");
  private final AtomicReference<String> status = new AtomicReference<>("{}");
  private final AtomicReference<String> events = new AtomicReference<>("[]");
  /** The hook's whole answer when set, instead of the one child and the status above. */
  private final AtomicReference<String> whole = new AtomicReference<>();
  private final AtomicReference<String> labels = new AtomicReference<>("{}");
  private final CompositeSyncFixture fixture = new CompositeSyncFixture((request, root) -> answer());
  /** The same controller with {@code metareactor.dev/delete-guard: "true"}. */
  private final CompositeSyncFixture guarded = new CompositeSyncFixture((request, root) -> answer(), true);
  private final RecordingApi api = fixture.api();
  private KubeObject parent;

  /** The hook: one ConfigMap child with the current value, and the current status. */
  private Mono<JsonNode> answer() {
    if (whole.get() != null) {
      return Mono.just(KubeJson.mapper().readTree(whole.get()));
    }
    return Mono.just(KubeJson.mapper().readTree("""
        {"status": %s, "children": [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "%s", "namespace": "team", "labels": %s}, "data": {"value": "%s"}}], "events": %s}"""
        .formatted(status.get(), childName.get(), labels.get(), value.get(), events.get())));
  }

  private void parentWithStatus(String status) {
    parent = fixture.parent("p", PARENT_UID, "{}", status);
  }

  /** The child as the engine created it before (last-applied annotation, ControllerRef, selector label). */
  private void childAsCreated(String name, String data) {
    fixture.childAsCreated(parent, (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "team"},
         "data": {"value": "%s"}}""".formatted(name, data)));
  }

  private Optional<Duration> run() {
    return fixture.sync("p");
  }

  @Test
  void aConvergedParentMakesNoApiRequest() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");

    run();

    assertThat(api.actions()).as("a steady-state sync reads caches only").isEmpty();
  }

  /**
   * The hook sees a cached child as the API server sent it, byte for byte (but for {@code managedFields}, which hooks
   * never see): however compactly the cache keeps the object's metadata, its last-applied annotation among it.
   */
  @Test
  void theHookSeesACachedChildAsTheApiServerSentIt() {
    AtomicReference<JsonNode> request = new AtomicReference<>();
    CompositeSyncFixture seen = new CompositeSyncFixture((sent, root) -> {
      request.set(sent);
      return answer();
    });
    KubeObject owner = seen.parent("p", PARENT_UID, "{}", "{}");
    String lastApplied = KubeJson.quote("{\"apiVersion\":\"v1\",\"data\":{\"value\":\"caf\u00e9 \\\"one\\\"\"},"
        + "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"child\",\"namespace\":\"team\"}}");
    String before = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"child\","
        + "\"namespace\":\"team\",\"uid\":\"child-uid\",\"resourceVersion\":\"9\",\"labels\":{\""
        + ChildSelector.CONTROLLER_UID_LABEL + "\":\"" + PARENT_UID + "\"},\"annotations\":{"
        + "\"metacontroller.k8s.io/last-applied-configuration\":" + lastApplied + ", \"note\" : \"\\u00e9\"},";
    String after = "\"ownerReferences\":[{\"apiVersion\":\"" + owner.apiVersion() + "\",\"kind\":\"" + owner.kind()
        + "\",\"name\":\"p\",\"uid\":\"" + PARENT_UID + "\",\"controller\":true}]},\"data\":{\"value\":\"x\"}}";
    String managedFields = "\"managedFields\":[{\"manager\":\"m\",\"operation\":\"Update\"}],";
    seen.configMaps().put(KubeObject.parse((before + managedFields + after).getBytes(StandardCharsets.UTF_8)));

    seen.sync("p");

    assertThat(new String(KubeJson.bytes(request.get()), StandardCharsets.UTF_8))
        .contains("\"children\":{\"ConfigMap.v1\":{\"child\":" + before + after + "}}");
  }

  @Test
  void aChangedChildIsUpdatedInPlaceAndNothingElseIsWritten() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");
    value.set("two");

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("update configmaps team/child");
    assertThat(api.actions().get(0).body()).contains("\"value\":\"two\"");
  }

  @Test
  void aNewChildIsCreatedWithItsControllerRefAndTheOldOneDeleted() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");
    childName.set("renamed");

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString)
        .containsExactlyInAnyOrder("create configmaps team/renamed", "delete configmaps team/child");
    String created = api.actions().stream().filter(action -> action.verb().equals("create")).findFirst()
        .orElseThrow().body();
    assertThat(created).contains("\"uid\":\"" + PARENT_UID + "\"").contains("\"controller\":true")
        .contains(ChildSelector.CONTROLLER_UID_LABEL);
  }

  @Test
  void aDesiredChildAnotherParentControlsIsLeftAloneAndReportedAndTheStatusStillWritten() {
    parentWithStatus("{}");
    KubeObject other = fixture.parent("other", "other-uid", "{}", "{\"observedGeneration\": 1}");
    fixture.childAsCreated(other, (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team"},
         "data": {"value": "theirs"}}"""));

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).as("no create, only the status")
        .containsExactly("patch-status things team/p");
    assertThat(fixture.events()).containsExactly("p: Warning ChildConflict ConfigMap team/child is controlled by"
        + " Thing other (uid other-uid); it is left to that controller");
  }

  /**
   * An object of the child's name that the caches do not show (with {@code --sharding}, one without this replica's
   * label: a user's own ConfigMap, say) is never written: the create is refused with 409, one read shows whose it is,
   * and the parent is told; the next syncs within the recheck interval send nothing for it.
   */
  @ParameterizedTest
  @EnumSource(ApplyStrategy.class)
  void anObjectOfTheChildsNameTheCachesDoNotShowIsLeftAsItIsReportedAndCounted(ApplyStrategy strategy) {
    CompositeSyncFixture sharded = new CompositeSyncFixture((request, root) -> answer(), strategy,
        Map.of(SHARD_LABEL, "s1"));
    sharded.parent("p", PARENT_UID, "{}", "{\"observedGeneration\": 1}");
    ObjectNode foreign = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team", "uid": "theirs",
         "resourceVersion": "3", "labels": {"app": "mine"}}, "data": {"value": "mine"}}""");
    sharded.api().holding(CompositeSyncFixture.CONFIG_MAPS, foreign);

    sharded.sync("p");
    sharded.sync("p");

    String create = strategy == ApplyStrategy.SERVER_SIDE_APPLY ? "apply-create" : "create";
    assertThat(sharded.api().actions()).extracting(RecordingApi.Action::toString).as("once, not per sync")
        .containsExactly(create + " configmaps team/child", "get configmaps team/child");
    assertThat(sharded.api().object(CompositeSyncFixture.CONFIG_MAPS, "team", "child").orElseThrow().toTree())
        .isEqualTo(foreign);
    assertThat(sharded.events()).hasSize(2).allMatch(event -> event.equals("p: Warning ChildConflict ConfigMap"
        + " team/child exists and is not this parent's: no object controls it; it is left as it is"));
    assertThat(sharded.conflicts()).containsExactly("configmaps none", "configmaps none");
  }

  @Test
  void anObjectOfTheChildsNameTheCacheShowsControlledByNothingIsReportedWithoutARequest() {
    parentWithStatus("{\"observedGeneration\": 1}");
    fixture.configMaps().put(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team", "uid": "theirs",
         "resourceVersion": "3"}, "data": {"value": "mine"}}""")));

    run();

    assertThat(api.actions()).isEmpty();
    assertThat(fixture.events()).containsExactly("p: Warning ChildConflict ConfigMap team/child exists and is not"
        + " this parent's: no object controls it; it is left as it is");
    assertThat(fixture.conflicts()).containsExactly("configmaps none");
  }

  /**
   * The parent's own child that lacks this replica's label (written before sharding, or not yet relabelled) is not
   * someone else's: it gets the label, guarded by the resourceVersion it was read at, and no Warning.
   */
  @Test
  void aChildOfThisParentWithoutThisReplicasLabelIsLabelled() {
    CompositeSyncFixture sharded = new CompositeSyncFixture((request, root) -> answer(),
        ApplyStrategy.SERVER_SIDE_APPLY, Map.of(SHARD_LABEL, "s1"));
    KubeObject owner = sharded.parent("p", PARENT_UID, "{}", "{\"observedGeneration\": 1}");
    ObjectNode unlabelled = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team", "uid": "mine",
         "resourceVersion": "5", "labels": {"controller-uid": "%s"}}, "data": {"value": "one"}}"""
        .formatted(PARENT_UID));
    OwnerRef.addControllerTo(unlabelled, owner);
    sharded.api().holding(CompositeSyncFixture.CONFIG_MAPS, unlabelled);

    sharded.sync("p");

    assertThat(sharded.api().actions()).extracting(RecordingApi.Action::toString).containsExactly(
        "apply-create configmaps team/child", "get configmaps team/child", "patch configmaps team/child");
    assertThat(sharded.api().actions().get(2).body())
        .contains("{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"5\"}")
        .contains("\"" + SHARD_LABEL + "\":\"s1\"").contains("\"controller-uid\":\"" + PARENT_UID);
    assertThat(sharded.events()).isEmpty();
    assertThat(sharded.conflicts()).containsExactly("configmaps this-parent");
  }

  /**
   * Labels the engine writes itself are its own: the hook's under {@code shard.metareactor.dev/} are dropped (the
   * replica's own label is the applier's), and {@code controller-uid} under {@code generateSelector} is the parent's
   * UID whatever the hook says (it used to fail the sync as not matching the selector).
   */
  @Test
  void theHooksLabelsUnderTheEnginesKeysAreIgnoredAndTheEnginesValuesWritten() {
    CompositeSyncFixture sharded = new CompositeSyncFixture((request, root) -> answer(),
        ApplyStrategy.SERVER_SIDE_APPLY, Map.of(SHARD_LABEL, "s1"));
    sharded.parent("p", PARENT_UID, "{}", "{\"observedGeneration\": 1}");
    labels.set("""
        {"app": "a", "controller-uid": "someone-else", "%s": "s2", "shard.metareactor.dev/map.other": "s3"}"""
        .formatted(SHARD_LABEL));

    sharded.sync("p");

    assertThat(sharded.api().actions()).extracting(RecordingApi.Action::toString)
        .containsExactly("apply-create configmaps team/child");
    JsonNode written = KubeJson.mapper().readTree(sharded.api().actions().get(0).body()).at("/metadata/labels");
    assertThat(written).isEqualTo(KubeJson.mapper().readTree("""
        {"app": "a", "controller-uid": "%s", "%s": "s1"}""".formatted(PARENT_UID, SHARD_LABEL)));
  }

  /**
   * A name (or namespace) the API server would refuse refuses the whole answer before anything is written: the old
   * child is not deleted for a rename to it, and the status is not written either.
   */
  @ParameterizedTest
  @MethodSource("namesTheApiServerRefuses")
  void aRenameToANameTheApiServerRefusesWritesNothing(String name, String problem) {
    parentWithStatus("{}");
    childAsCreated("child", "one");
    childName.set(name);

    assertThatThrownBy(this::run).isInstanceOf(HookResponseException.class).hasMessageContaining(problem);
    assertThat(api.actions()).as("no request at all: no delete of the old child, no create, no status").isEmpty();
  }

  static Stream<Arguments> namesTheApiServerRefuses() {
    String subdomain = "is not a DNS-1123 subdomain";
    return Stream.of(
        Arguments.of("Bad_Name", "children[0]: ConfigMap name \"Bad_Name\" " + subdomain),
        Arguments.of("../x", "name \"../x\" " + subdomain),
        Arguments.of("a/status", "name \"a/status\" " + subdomain),
        Arguments.of("a".repeat(300), "is 300 characters long, more than the 253 of a DNS-1123 subdomain"),
        Arguments.of("", "children[0].metadata.name is required"));
  }

  /**
   * Owner references in an answer that the API server refuses or that would take a child from its parent refuse the
   * whole answer before anything is written (found by CompositeFuzzedAnswersTest): a create with another controller
   * beside the parent's, or with a reference lacking a field the API server requires, is refused by the API server
   * after the rename's delete, and an update merges the references with the observed ones by name, so another
   * controller, another owner of the parent's name or the parent's own reference without controller: true took the
   * ControllerRef's place.
   */
  @ParameterizedTest
  @MethodSource("ownerReferencesThatTakeTheChild")
  void ownerReferencesTheApiServerRefusesOrThatWouldTakeAChildFromItsParentRefuseTheWholeAnswer(String name,
      String references,
      String problem) {
    parentWithStatus("{}");
    childAsCreated("child", "one");
    whole.set("""
        {"children": [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "%s", "namespace": "team", "ownerReferences": %s}, "data": {"value": "two"}}]}"""
        .formatted(name, references));

    assertThatThrownBy(this::run).isInstanceOf(HookResponseException.class).hasMessageContaining(problem);
    assertThat(api.actions()).as("no request at all: no update, no create, no delete, no status").isEmpty();
  }

  static Stream<Arguments> ownerReferencesThatTakeTheChild() {
    String otherController = """
        [{"apiVersion": "test.metareactor.dev/v1", "kind": "Thing", "name": "p", "uid": "victim-uid",
          "controller": true}]""";
    String parentNotController = """
        [{"apiVersion": "test.metareactor.dev/v1", "kind": "Thing", "name": "p", "uid": "%s", "controller": false}]"""
        .formatted(PARENT_UID);
    String namedLikeTheParent = """
        [{"apiVersion": "v1", "kind": "Secret", "name": "p", "uid": "secret-uid"}]""";
    String withoutUid = """
        [{"apiVersion": "v1", "kind": "Secret", "name": "key", "uid": "key-uid"},
         {"apiVersion": "v1", "kind": "Secret", "name": "other"}]""";
    String noVersion = """
        [{"apiVersion": "apps/", "kind": "Deployment", "name": "web", "uid": "web-uid"}]""";
    String controllerAString = """
        [{"apiVersion": "test.metareactor.dev/v1", "kind": "Thing", "name": "p", "uid": "%s", "controller": "true"}]"""
        .formatted(PARENT_UID);
    return Stream.of("child", "renamed").flatMap(name -> Stream.of(
        Arguments.of(name, otherController, "children[0]: ConfigMap team/" + name + " names Thing \"p\" (uid"
            + " \"victim-uid\") as its controller; only its parent may be"),
        Arguments.of(name, parentNotController, "has an owner reference to its parent without controller: true"),
        Arguments.of(name, namedLikeTheParent, "names an owner Secret \"p\" (uid \"secret-uid\") of its parent's"
            + " name, which an update would merge into the parent's ControllerRef"),
        Arguments.of(name, "\"p\"", "metadata.ownerReferences must be a list, got STRING"),
        Arguments.of(name, "[\"p\"]", "metadata.ownerReferences must be a list of objects, got STRING"),
        Arguments.of(name, withoutUid, "metadata.ownerReferences[1].uid must be a string that is not empty, got none"),
        Arguments.of(name, noVersion, "metadata.ownerReferences[0].apiVersion \"apps/\" has no version"),
        Arguments.of(name, controllerAString, "metadata.ownerReferences[0].controller must be a boolean, got STRING")));
  }

  @Test
  void anotherOwnerAndTheParentsOwnControllerRefEchoedAreKept() {
    parentWithStatus("{\"observedGeneration\": 1}");
    whole.set("""
        {"children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team",
          "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "key", "uid": "key-uid"},
                              {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing", "name": "p", "uid": "%s",
                               "controller": true, "blockOwnerDeletion": true}]}}]}""".formatted(PARENT_UID));

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("create configmaps team/child");
    JsonNode refs = KubeJson.mapper().readTree(api.actions().get(0).body()).at("/metadata/ownerReferences");
    assertThat(refs).hasSize(2);
    assertThat(refs.get(0).path("uid").asString()).isEqualTo("key-uid");
    assertThat(refs.get(1).path("uid").asString()).isEqualTo(PARENT_UID);
    assertThat(refs.get(1).path("controller").asBoolean()).isTrue();
  }

  @Test
  void theEventsTheHookAsksForAreRecordedOnTheParentAndABadOneFailsTheSyncNamingIt() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");
    events.set("[{\"type\": \"Normal\", \"reason\": \"Checked\", \"message\": \"all good\"}]");

    run();

    assertThat(fixture.events()).containsExactly("p: Normal Checked all good");
    assertThat(api.actions()).isEmpty();

    events.set("[{\"type\": \"Loud\", \"reason\": \"Checked\", \"message\": \"all good\"}]");
    assertThatThrownBy(this::run).hasMessageContaining("events[0].type must be Normal or Warning");
  }

  @Test
  void aStatusThatDiffersIsWrittenOnceAsAUidGuardedPatch() {
    parentWithStatus("{}");
    childAsCreated("child", "one");

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("patch-status things team/p");
    assertThat(api.actions().get(0).body()).contains("\"op\":\"test\"").contains(PARENT_UID)
        .contains("\"observedGeneration\":1");
  }

  @Test
  void statusNumbersAreWrittenAsGoWritesThem() {
    parentWithStatus("{}");
    childAsCreated("child", "one");
    status.set("{\"replicas\": 2.0, \"ratio\": 1E+2}");

    run();

    assertThat(api.actions().get(0).body()).contains("\"ratio\":100,").contains("\"replicas\":2}");
  }

  /** Caches the parent {@code p}, converged, in {@code wired} with the named children as the engine created them. */
  private void parentWithChildren(CompositeSyncFixture wired, String... names) {
    parent = wired.parent("p", PARENT_UID, "{}", "{\"observedGeneration\": 1}");
    for (String name : names) {
      wired.childAsCreated(parent, (ObjectNode) KubeJson.mapper().readTree("""
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "team"},
           "data": {"value": "one"}}""".formatted(name)));
    }
  }

  /** Caches the child {@code name} of {@code wired} as being deleted. */
  private static void deleting(CompositeSyncFixture wired, String name) {
    ObjectNode child = wired.configMaps().get(CompositeSyncFixture.NAMESPACE, name).orElseThrow().toTree();
    child.withObject("metadata").put("deletionTimestamp", "2026-01-01T00:00:00Z");
    wired.configMaps().put(KubeObject.of(child));
  }

  /** An answer with the status {@code {}} and {@code children} as given (JSON, or nothing when {@code null}). */
  private void answerChildren(String children) {
    if (children != null) {
      whole.set("{\"status\": {}, \"children\": " + children + "}");
      return;
    }
    whole.set("{\"status\": {}}");
  }

  /** An answer with the status {@code {}} and the named children (value {@code one}, as cached). */
  private void answerChildrenNamed(String... names) {
    List<String> children = Stream.of(names).map(name -> """
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "team"},
         "data": {"value": "one"}}""".formatted(name)).toList();
    answerChildren("[" + String.join(", ", children) + "]");
  }

  private static List<String> requests(CompositeSyncFixture wired) {
    return wired.api().actions().stream().map(RecordingApi.Action::toString).toList();
  }

  @Test
  void anAnswerWithoutChildrenDeletesTheLiveOnesAsMetacontrollerDoesWithAMissingChildrenWarning() {
    parentWithChildren(fixture, "a", "b", "c");
    deleting(fixture, "c");

    answerChildren(null);
    run();

    assertThat(requests(fixture)).containsExactlyInAnyOrder("delete configmaps team/a", "delete configmaps team/b");
    assertThat(fixture.events()).containsExactly("p: Warning MissingChildren the sync answer has no \"children\""
        + " (absent or null, not []): deleting all 2 observed, as Metacontroller does; annotate the controller"
        + " metareactor.dev/delete-guard=true to refuse such answers");

    answerChildren("null");
    run();
    assertThat(fixture.events()).as("null is as absent").hasSize(2);

    answerChildren("[]");
    run();
    assertThat(fixture.events()).as("an empty list deletes on purpose: no Warning").hasSize(2);
    assertThat(requests(fixture)).hasSize(6);
  }

  @Test
  void anAnswerWithoutChildrenForAParentWithoutLiveChildrenSaysNothing() {
    parentWithChildren(fixture, "a");
    deleting(fixture, "a");

    answerChildren(null);
    run();

    assertThat(fixture.events()).isEmpty();
    assertThat(requests(fixture)).isEmpty();
  }

  @Test
  void underTheDeleteGuardAnAnswerWithoutChildrenIsRefusedWholeAndNothingIsWritten() {
    parentWithChildren(guarded, "a", "b");

    for (String children : new String[] {null, "null"}) {
      answerChildren(children);
      assertThatThrownBy(() -> guarded.sync("p")).isInstanceOf(HookResponseException.class)
          .hasMessage("the answer has no \"children\" (absent or null, not []), which would delete all 2 observed;"
              + " refused under metareactor.dev/delete-guard, nothing written (answer \"children\": [] to delete"
              + " them)");
    }

    assertThat(requests(guarded)).as("no delete, and not even the status").isEmpty();
    assertThat(guarded.events()).isEmpty();
  }

  @Test
  void underTheDeleteGuardAnAnswerWithoutChildrenIsFollowedWhenItWouldDeleteNothing() {
    parentWithChildren(guarded, "a");
    deleting(guarded, "a");
    whole.set("{\"status\": {\"phase\": \"done\"}}");

    guarded.sync("p");

    assertThat(requests(guarded)).containsExactly("patch-status things team/p");
  }

  @Test
  void underTheDeleteGuardAnAnswerDeletingMoreThanHalfOfTheLiveChildrenAtOnceIsRefused() {
    parentWithChildren(guarded, "a", "b", "c", "d");

    answerChildrenNamed("a");
    assertThatThrownBy(() -> guarded.sync("p")).isInstanceOf(HookResponseException.class)
        .hasMessage("the answer would delete 3 of the 4 observed children at once, more than half; refused under"
            + " metareactor.dev/delete-guard, nothing written (delete them in smaller steps)");
    answerChildrenNamed();
    assertThatThrownBy(() -> guarded.sync("p")).hasMessageContaining("would delete 4 of the 4 observed children");
    assertThat(requests(guarded)).isEmpty();

    answerChildrenNamed("a", "b");
    guarded.sync("p");
    assertThat(requests(guarded)).as("half at once is allowed")
        .containsExactlyInAnyOrder("delete configmaps team/c", "delete configmaps team/d");
  }

  @Test
  void underTheDeleteGuardOnlyChildrenReallyDeletedCountAndTheLastOneMayGo() {
    parentWithChildren(guarded, "a", "b", "c");
    deleting(guarded, "b");
    deleting(guarded, "c");

    answerChildrenNamed();
    guarded.sync("p");

    assertThat(requests(guarded)).as("one of one live child: not more than one")
        .containsExactly("delete configmaps team/a");
  }

  @Test
  void aParentThatIsGoneIsNoSync() {
    assertThat(run()).isEmpty();
    assertThat(api.actions()).isEmpty();
  }

  /**
   * {@code metareactor.dev/write-child-status: "true"} through a whole sync: the ConfigMap children have no status
   * subresource, so the status the answer gives one is not written, and the parent is told once, not per sync. (The
   * child was created from the same answer: dynamic apply records its status in the last-applied annotation.)
   */
  @Test
  void aChildStatusOfATypeWithoutTheSubresourceIsNotWrittenAndWarnedOfOnceForTheController() {
    CompositeSyncFixture writing = new CompositeSyncFixture((request, root) -> answer(),
        Map.of(ChildStatusAnnotation.KEY, "true"));
    KubeObject cached = writing.parent("p", PARENT_UID, "{}", "{\"observedGeneration\": 1}");
    writing.childAsCreated(cached, (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team"},
         "data": {"value": "one"}, "status": {"seen": 1}}"""));
    whole.set("""
        {"status": {"observedGeneration": 1}, "children": [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "child", "namespace": "team"}, "data": {"value": "one"}, "status": {"seen": 1}}]}""");

    writing.sync("p");
    writing.sync("p");

    assertThat(writing.api().actions()).as("nothing to write: the status has nowhere to go").isEmpty();
    assertThat(writing.events()).containsExactly("p: Warning ChildStatusNotWritten ConfigMap (configmaps.v1) has no"
        + " status subresource: the status the sync answer gives its objects is not written ("
        + ChildStatusAnnotation.KEY + ")");
  }

  /** The controller with {@code metareactor.dev/allow-delete-parent: "true"}. */
  private final CompositeSyncFixture allowing = new CompositeSyncFixture((request, root) -> answer(),
      Map.of(DeleteParentAnnotation.KEY, "true"));

  /** An answer with one child, a status and {@code deleteParent}. */
  private static String deletingAnswer(String deleteParent) {
    return """
        {"status": {"phase": "Done"}, "deleteParent": %s, "children": [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "last", "namespace": "team"}, "data": {"value": "v"}}]}""".formatted(deleteParent);
  }

  @Test
  void aHookMayDeleteItsParentWhenTheControllerAllowsItLastAndUidCheckedWithAnEvent() {
    allowing.parent("p", PARENT_UID, "{}", "{}");
    whole.set(deletingAnswer("true"));

    allowing.sync("p");

    assertThat(allowing.api().actions()).extracting(RecordingApi.Action::toString).containsExactly(
        "create configmaps team/last", "patch-status things team/p", "delete things team/p");
    assertThat(allowing.api().actions().get(2).body()).isEqualTo(PARENT_UID);
    assertThat(allowing.events()).containsExactly("p: Normal DeletedByHook Deleted at the sync hook's request"
        + " (deleteParent)");
  }

  @Test
  void deleteParentWithoutTheControllersAnnotationOrNotABooleanIsRefusedWholeWritingNothing() {
    parentWithStatus("{}");
    whole.set(deletingAnswer("true"));

    assertThatThrownBy(this::run).isInstanceOf(HookResponseException.class)
        .hasMessageContaining("deleteParent: true needs the annotation " + DeleteParentAnnotation.KEY);
    assertThat(api.actions()).isEmpty();

    allowing.parent("p", PARENT_UID, "{}", "{}");
    whole.set(deletingAnswer("\"yes\""));
    assertThatThrownBy(() -> allowing.sync("p")).hasMessageContaining("deleteParent must be true or false");
    assertThat(allowing.api().actions()).isEmpty();
  }

  @Test
  void aParentIsNotDeletedWhenAWriteBeforeItFailedNorWhenTheAnswerSaysFalse() {
    allowing.parent("p", PARENT_UID, "{}", "{}");
    whole.set(deletingAnswer("true"));
    allowing.api().refusingNext("create", 403, "Forbidden");

    assertThatThrownBy(() -> allowing.sync("p")).hasMessageContaining("can't create ConfigMap team/last");
    assertThat(allowing.api().actions()).extracting(RecordingApi.Action::verb).doesNotContain("delete");

    allowing.api().clearActions();
    whole.set(deletingAnswer("false"));
    allowing.sync("p");
    assertThat(allowing.api().actions()).extracting(RecordingApi.Action::verb).doesNotContain("delete");
    assertThat(allowing.events()).isEmpty();
  }

  @Test
  void aParentAlreadyBeingDeletedIsNotDeletedAgain() {
    KubeObject cached = allowing.parent("p", PARENT_UID, "{}", "{}");
    ObjectNode deleting = cached.toTree();
    ((ObjectNode) deleting.get("metadata")).put("deletionTimestamp", "2026-11-27T00:00:00Z");
    allowing.parents().put(KubeObject.of(deleting));
    whole.set(deletingAnswer("true"));

    allowing.sync("p");

    assertThat(allowing.api().actions()).extracting(RecordingApi.Action::verb).doesNotContain("delete");
  }

  /** A ConfigMap child {@code name} of {@code order} ({@code metareactor.dev/order}), as the hook answers it. */
  private static String orderedChild(String name, int order) {
    return """
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "team",
          "annotations": {"%s": "%d"}}, "data": {"value": "v"}}""".formatted(name, ChildOrder.ANNOTATION, order);
  }

  private void answerOrdered(String... children) {
    whole.set("{\"status\": {}, \"children\": [" + String.join(", ", children) + "]}");
  }

  /** What the last sync wrote to ConfigMaps, {@code <verb> <name>} each, and forgets it. */
  private List<String> childWrites() {
    List<String> writes = api.actions().stream().filter(action -> action.resource().equals("configmaps"))
        .map(action -> action.verb() + " " + action.name()).toList();
    api.clearActions();
    return writes;
  }

  @Test
  void orderedChildrenAreCreatedOneOrderASyncOnceTheOnesBeforeThemExistAndDeletedInReverse() {
    parentWithStatus("{\"observedGeneration\": 1}");
    List<String> children = List.of(orderedChild("first", 0), orderedChild("second", 1), orderedChild("third", 2));
    answerOrdered(children.get(2), children.get(0), children.get(1));
    List<KubeObject> created = new ArrayList<>();
    for (String child : children) {
      run();
      assertThat(childWrites()).as("one order a sync").containsExactly("create " + KubeJson.mapper().readTree(child)
          .path("metadata").path("name").asString());
      created.add(fixture.childAsCreated(parent, (ObjectNode) KubeJson.mapper().readTree(child)));
    }
    run();
    assertThat(childWrites()).as("converged").isEmpty();

    answerOrdered();
    Collections.reverse(created);
    for (KubeObject child : created) {
      run();
      assertThat(childWrites()).as("highest order first").containsExactly("delete " + child.name());
      fixture.configMaps().deliver(new ObjectEvent(ObjectEvent.Type.DELETED, null, child));
    }
  }

  @Test
  void anOrderThatIsNotAnIntegerRefusesTheAnswerWhole() {
    parentWithStatus("{}");
    answerOrdered(orderedChild("first", 0).replace("\"0\"", "\"soon\""));

    assertThatThrownBy(this::run).isInstanceOf(HookResponseException.class)
        .hasMessageContaining("metadata.annotations[metareactor.dev/order] must be an integer in a string, got"
            + " \"soon\"");
    assertThat(api.actions()).isEmpty();
  }
}
