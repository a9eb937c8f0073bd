package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.api.StatusCheck;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** Which ordered children a sync may write now ({@link ChildOrder}). */
class ChildOrderTest {

  private static final ApiResource WIDGETS =
      new ApiResource("test.metareactor.dev", "v1", "widgets", "Widget", true, java.util.Set.of("status"));
  private static final ChildType CHECKED = new ChildType(WIDGETS, new FakeInformerLease(WIDGETS),
      UpdateMethod.IN_PLACE, List.of(new StatusCheck("Ready", "True", null)));
  private static final ChildType UNCHECKED =
      new ChildType(WIDGETS, new FakeInformerLease(WIDGETS), UpdateMethod.IN_PLACE);

  private static ObjectNode widget(String name, int order, String ready) {
    return (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Widget",
         "metadata": {"name": "%s", "namespace": "ns", "annotations": {"metareactor.dev/order": "%d"}},
         "status": {"conditions": [{"type": "Ready", "status": "%s"}]}}""".formatted(name, order, ready));
  }

  private static List<String> names(List<DesiredChild> children) {
    return children.stream().map(DesiredChild::name).toList();
  }

  @Test
  void theNextOrderWaitsUntilEveryOneBeforeItPassesItsTypesStatusChecks() {
    List<DesiredChild> desired = List.of(new DesiredChild(CHECKED, widget("db", 0, "")),
        new DesiredChild(CHECKED, widget("app", 1, "")), new DesiredChild(CHECKED, widget("web", 2, "")));

    assertThat(names(ChildOrder.writable(desired, Map.of()))).containsExactly("db");
    assertThat(names(ChildOrder.writable(desired, Map.of(CHECKED, List.of(KubeObject.of(widget("db", 0, "False")))))))
        .as("db exists but is not ready").containsExactly("db");
    assertThat(names(ChildOrder.writable(desired, Map.of(CHECKED, List.of(KubeObject.of(widget("db", 0, "True")))))))
        .containsExactly("db", "app");
    assertThat(names(ChildOrder.writable(desired, Map.of(CHECKED, List.of(KubeObject.of(widget("db", 0, "True")),
        KubeObject.of(widget("app", 1, "True"))))))).containsExactly("db", "app", "web");
  }

  @Test
  void withoutStatusChecksExistingIsEnoughAndWithoutOrdersEverythingIsWritableAtOnce() {
    List<DesiredChild> ordered = List.of(new DesiredChild(UNCHECKED, widget("db", 0, "False")),
        new DesiredChild(UNCHECKED, widget("app", 1, "False")));
    assertThat(names(ChildOrder.writable(ordered,
        Map.of(UNCHECKED, List.of(KubeObject.of(widget("db", 0, "False"))))))).containsExactly("db", "app");

    List<DesiredChild> unordered = List.of(new DesiredChild(UNCHECKED, widget("db", 3, "")),
        new DesiredChild(UNCHECKED, widget("app", 3, "")));
    assertThat(ChildOrder.writable(unordered, Map.of())).isSameAs(unordered);
  }

  @Test
  void aLowerOrderIsDeletedOnlyOnceNoHigherOneIsLeftBeingDeletedOrNot() {
    KubeObject db = KubeObject.of(widget("db", 0, ""));
    ObjectNode deletingApp = widget("app", 1, "");
    deletingApp.withObject("metadata").put("deletionTimestamp", "2026-11-27T00:00:00Z");
    Map<ChildType, List<KubeObject>> observed = Map.of(UNCHECKED, List.of(db, KubeObject.of(deletingApp)));

    Map<ChildType, List<KubeObject>> undesired = ChildrenManager.undesired(observed, List.of());
    assertThat(undesired.get(UNCHECKED)).extracting(KubeObject::name).containsExactly("db");
    assertThat(ChildOrder.deletable(undesired, observed, List.of())).as("app is still there").isEmpty();
    assertThat(ChildOrder.deletable(undesired, Map.of(UNCHECKED, List.of(db)), List.of())).isEqualTo(undesired);
  }
}
