package dev.metareactor.engine.controller.composite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
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

  /** What the hook answers: its children's {@code data.value}. */
  private final AtomicReference<String> value = new AtomicReference<>("one");
  private final AtomicReference<String> childName = new AtomicReference<>("child");
  private final AtomicReference<String> status = new AtomicReference<>("{}");
  private final AtomicReference<String> events = new AtomicReference<>("[]");
  private final CompositeSyncFixture fixture = new CompositeSyncFixture((request, root) -> answer());
  private final RecordingApi api = fixture.api();
  private KubeObject parent;

  /** The hook: one ConfigMap child with the current value, and the current status. */
  private Mono<JsonNode> answer() {
    return Mono.just(KubeJson.mapper().readTree("""
        {"status": %s, "children": [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "%s", "namespace": "team"}, "data": {"value": "%s"}}], "events": %s}"""
        .formatted(status.get(), childName.get(), value.get(), events.get())));
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

  @Test
  void aParentThatIsGoneIsNoSync() {
    assertThat(run()).isEmpty();
    assertThat(api.actions()).isEmpty();
  }
}
