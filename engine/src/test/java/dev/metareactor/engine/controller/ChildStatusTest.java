package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The status a sync answer gives a child ({@link ChildStatus}, {@code metareactor.dev/write-child-status}) against
 * the recording API of the fakes tier, through the {@link ChildrenManager} of either apply strategy: dropped without
 * the annotation, written to the status subresource with it (a UID-guarded JSON Patch, or a server-side apply of the
 * subresource), never twice for the same status, never for a type without the subresource.
 */
class ChildStatusTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource WIDGETS =
      new ApiResource("test.metareactor.dev", "v1", "widgets", "Widget", true, Set.of("status"));
  private static final ApiResource PLAIN =
      new ApiResource("test.metareactor.dev", "v1", "plainwidgets", "PlainWidget", true, Set.of());
  private static final String MANAGER = "metacontroller";

  private final RecordingApi api = new RecordingApi();
  private final FakeInformerLease widgets = new FakeInformerLease(WIDGETS);
  private final ChildType widgetType = new ChildType(WIDGETS, widgets, UpdateMethod.IN_PLACE);
  private final ChildType plainType = new ChildType(PLAIN, new FakeInformerLease(PLAIN), UpdateMethod.IN_PLACE);
  private final KubeObject parent = object(THINGS, "team", "p").build();
  private final List<String> events = new CopyOnWriteArrayList<>();

  private void record(KubeObject object, EventRecorder.Type type, String reason, String message) {
    events.add(object.name() + ": " + type + " " + reason + " " + message);
  }

  private ChildStatus childStatus(ApplyStrategy strategy) {
    return new ChildStatus(api, strategy, MANAGER, this::record);
  }

  private ChildrenManager manager(ApplyStrategy strategy, @Nullable ChildStatus status) {
    return new ChildrenManager(api, ChildApplier.of(strategy, api, MANAGER), this::record,
        ChildrenManager.ConflictCounter.NONE, status);
  }

  /** The hook's widget {@code p-w}, with {@code status} (JSON) unless {@code null}. */
  private static ObjectNode desired(ApiResource resource, @Nullable String status) {
    ObjectNode object = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "%s", "metadata": {"name": "p-w", "namespace": "team"},
         "spec": {"size": 1}}""".formatted(resource.kind()));
    if (status != null) {
      object.set("status", KubeJson.mapper().readTree(status));
    }
    return object;
  }

  private List<String> requests() {
    return api.actions().stream().map(RecordingApi.Action::toString).toList();
  }

  private static JsonNode tree(String json) {
    return KubeJson.mapper().readTree(json);
  }

  private void write(ChildStatus status, ChildType type, KubeObject current, ObjectNode desired) {
    status.write(parent, type, current, desired).block(Duration.ofSeconds(5));
  }

  @ParameterizedTest
  @EnumSource(ApplyStrategy.class)
  void withoutTheAnnotationTheStatusAnAnswerGivesAChildIsDroppedAsUpstreamDropsIt(ApplyStrategy strategy) {
    manager(strategy, null).manage(parent, Map.of(widgetType, List.of()),
        List.of(new DesiredChild(widgetType, desired(WIDGETS, "{\"phase\": \"Ready\"}")))).block(Duration.ofSeconds(5));

    assertThat(requests()).singleElement().asString().endsWith("widgets team/p-w").doesNotContain("status");
  }

  @ParameterizedTest
  @EnumSource(ApplyStrategy.class)
  void withItAChildCreatedGetsItsStatusWrittenToTheSubresourceRightAfter(ApplyStrategy strategy) {
    manager(strategy, childStatus(strategy)).manage(parent, Map.of(widgetType, List.of()),
        List.of(new DesiredChild(widgetType, desired(WIDGETS, "{\"phase\": \"Ready\"}")))).block(Duration.ofSeconds(5));

    assertThat(requests()).hasSize(2);
    assertThat(requests().get(1)).isEqualTo(strategy == ApplyStrategy.SERVER_SIDE_APPLY
        ? "apply-status widgets team/p-w" : "patch-status widgets team/p-w");
  }

  @Test
  void dynamicApplyReplacesTheWholeStatusInAPatchGuardedByTheUidOnlyWhenItDiffersFromTheCachedAndTheLastWritten() {
    ChildStatus status = childStatus(ApplyStrategy.DYNAMIC_APPLY);
    KubeObject cached = object(WIDGETS, "team", "p-w").field("status", "{\"phase\": \"Ready\"}").build();
    api.holding(WIDGETS, cached);

    write(status, widgetType, cached, desired(WIDGETS, "{\"phase\": \"Ready\"}"));
    assertThat(requests()).as("the cached status").isEmpty();

    write(status, widgetType, cached, desired(WIDGETS, "{\"phase\": \"Gone\"}"));
    assertThat(requests()).containsExactly("patch-status widgets team/p-w");
    assertThat(tree(api.actions().get(0).body())).isEqualTo(tree("""
        [{"op": "test", "path": "/metadata/uid", "value": "p-w-uid"},
         {"op": "add", "path": "/status", "value": {"phase": "Gone"}}]"""));

    // The echo of that write may sync the parent before the cache shows it: the same status is not sent again.
    write(status, widgetType, cached, desired(WIDGETS, "{\"phase\": \"Gone\"}"));
    assertThat(requests()).hasSize(1);
  }

  @Test
  void serverSideApplyAppliesTheStatusSubresourceAsTheFieldManagerOnlyWhereTheApplyWouldChangeSomething() {
    ChildStatus status = childStatus(ApplyStrategy.SERVER_SIDE_APPLY);
    // Applied before: the manager owns status.phase; someone else wrote status.seen, which stays theirs.
    KubeObject cached = KubeObject.parse("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Widget",
         "metadata": {"name": "p-w", "namespace": "team", "uid": "p-w-uid", "resourceVersion": "4",
                      "managedFields": [{"manager": "metacontroller", "operation": "Apply", "subresource": "status",
                                         "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}}]},
         "spec": {"size": 1}, "status": {"phase": "Ready", "seen": 3}}""".getBytes(StandardCharsets.UTF_8),
        MANAGER);
    assertThat(cached.appliedStatusFields()).isNotNull();
    api.holding(WIDGETS, cached);

    write(status, widgetType, cached, desired(WIDGETS, "{\"phase\": \"Ready\"}"));
    assertThat(requests()).as("what the manager applied is there; the rest is someone else's").isEmpty();

    write(status, widgetType, cached, desired(WIDGETS, "{\"phase\": \"Gone\"}"));
    assertThat(requests()).containsExactly("apply-status widgets team/p-w");
    assertThat(tree(api.actions().get(0).body())).isEqualTo(tree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Widget", "metadata": {"name": "p-w", "namespace": "team"},
         "status": {"phase": "Gone"}}"""));
    write(status, widgetType, cached, desired(WIDGETS, "{\"phase\": \"Gone\"}"));
    assertThat(requests()).as("not again before the cache shows it").hasSize(1);

    api.clearActions();
    write(status, widgetType, cached, desired(WIDGETS, "{}"));
    assertThat(requests()).as("a field the hook no longer gives is removed").hasSize(1);
  }

  @ParameterizedTest
  @EnumSource(ApplyStrategy.class)
  void aChildWithoutStatusInTheAnswerKeepsTheStatusItHas(ApplyStrategy strategy) {
    KubeObject cached = object(WIDGETS, "team", "p-w").field("status", "{\"phase\": \"Ready\"}").build();
    api.holding(WIDGETS, cached);

    write(childStatus(strategy), widgetType, cached, desired(WIDGETS, null));

    assertThat(requests()).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(ApplyStrategy.class)
  void aTypeWithoutAStatusSubresourceGetsNoWriteAndOneWarningForTheControllersLife(ApplyStrategy strategy) {
    ChildStatus status = childStatus(strategy);
    KubeObject cached = object(PLAIN, "team", "p-w").build();
    api.holding(PLAIN, cached);

    write(status, plainType, cached, desired(PLAIN, "{\"phase\": \"Ready\"}"));
    write(status, plainType, cached, desired(PLAIN, "{\"phase\": \"Gone\"}"));

    assertThat(requests()).isEmpty();
    assertThat(events).containsExactly("p: Warning ChildStatusNotWritten PlainWidget (plainwidgets"
        + ".test.metareactor.dev/v1) has no status subresource: the status the sync answer gives its objects is not"
        + " written (metareactor.dev/write-child-status)");
  }
}
