package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.controller.composite.CompositeSyncFixture.CONFIG_MAPS;
import static dev.metareactor.engine.controller.composite.CompositeSyncFixture.THINGS;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.OtherNamespaceChildren;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Children in other namespaces ({@code metareactor.dev/cross-namespace-children}) in the middle tier
 * ({@link CompositeSyncFixture}: the real sync over in-memory caches and a recording API): what is created there and
 * how it is marked, what is refused, how the hook is shown them, what is never taken over, and the parent's
 * finalizer deleting them when it goes.
 */
class CompositeOtherNamespacesTest {

  private static final String PARENT_UID = "parent-uid";
  private static final String FINALIZER = "metacontroller.io/compositecontroller-things";

  /** The hook's children, {@code namespace/name} each. */
  private final AtomicReference<List<String>> children = new AtomicReference<>(List.of("team/here", "shared/there"));
  /** Every request the hook was sent. */
  private final List<JsonNode> requests = new ArrayList<>();

  private Mono<JsonNode> answer(JsonNode request) {
    requests.add(request);
    StringBuilder answer = new StringBuilder("{\"status\": {}, \"children\": [");
    for (String child : children.get()) {
      String[] parts = child.split("/");
      answer.append(answer.charAt(answer.length() - 1) == '[' ? "" : ",").append("""
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "%s"},
           "data": {"value": "new"}}""".formatted(parts[1], parts[0]));
    }
    return Mono.just(KubeJson.mapper().readTree(answer.append("]}").toString()));
  }

  private CompositeSyncFixture controller(String allowed) {
    return new CompositeSyncFixture((request, root) -> answer(request),
        Map.of(CrossNamespaceChildren.KEY, allowed));
  }

  /** Caches parent {@code team/p} with the controller's finalizer (as a first sync leaves it), the API holding it. */
  private static KubeObject parent(CompositeSyncFixture fixture, boolean deleting) {
    KubeObjectBuilder parent = object(THINGS, "team", "p").uid(PARENT_UID).finalizer(FINALIZER)
        .field("status", "{\"observedGeneration\": 1}");
    KubeObject built = (deleting ? parent.deleting() : parent).build();
    fixture.parents().put(built);
    fixture.api().holding(THINGS, built);
    return built;
  }

  /** A child of {@code parent} in namespace {@code shared}, as the engine created it there. */
  private static KubeObjectBuilder childElsewhere(String name, KubeObject parent) {
    return object(CONFIG_MAPS, "shared", name)
        .label(ChildSelector.CONTROLLER_UID_LABEL, parent.uid())
        .label(OtherNamespaceChildren.PARENT_UID_LABEL, parent.uid())
        .annotation(OtherNamespaceChildren.PARENT_ANNOTATION, parent.namespacedName())
        .annotation(OtherNamespaceChildren.CONTROLLER_ANNOTATION, "CompositeController/things")
        .field("data", "{\"value\": \"old\"}");
  }

  private static List<String> requests(CompositeSyncFixture fixture) {
    return fixture.api().actions().stream().map(RecordingApi.Action::toString).toList();
  }

  private static JsonNode body(CompositeSyncFixture fixture, String request) {
    return fixture.api().actions().stream().filter(action -> action.toString().equals(request))
        .map(action -> KubeJson.mapper().readTree(action.body())).findFirst().orElseThrow();
  }

  @Test
  void withoutTheAnnotationAChildInAnotherNamespaceIsRefusedWholeAsBefore() {
    CompositeSyncFixture plain = new CompositeSyncFixture((request, root) -> answer(request));
    plain.parent("p", PARENT_UID, "{}", "{}");

    assertThatThrownBy(() -> plain.sync("p")).isInstanceOf(HookResponseException.class)
        .hasMessage("children: ConfigMap there is in namespace shared but its parent is in team (an owner must be in"
            + " the same namespace as what it owns)");
    assertThat(plain.api().actions()).as("no finalizer either: nothing written").isEmpty();
  }

  @Test
  void aSelectedParentGetsTheFinalizerThatDeletesItsChildrenElsewhere() {
    CompositeSyncFixture fixture = controller("shared");
    KubeObject parent = fixture.parent("p", PARENT_UID, "{}", "{}");
    fixture.api().holding(THINGS, parent);

    fixture.sync("p");

    assertThat(requests(fixture)).first().isEqualTo("patch things team/p");
    assertThat(body(fixture, "patch things team/p").toString()).contains(FINALIZER);
  }

  @Test
  void aChildInAnAllowedNamespaceIsCreatedWithoutControllerRefAndMarkedAsTheParents() {
    CompositeSyncFixture fixture = controller("shared, tools");
    parent(fixture, false);

    fixture.sync("p");

    assertThat(requests(fixture)).containsExactlyInAnyOrder("create configmaps team/here",
        "create configmaps shared/there");
    JsonNode there = body(fixture, "create configmaps shared/there").path("metadata");
    assertThat(there.has("ownerReferences")).as("an owner reference cannot cross namespaces").isFalse();
    assertThat(there.path("labels").path(OtherNamespaceChildren.PARENT_UID_LABEL).asString()).isEqualTo(PARENT_UID);
    assertThat(there.path("annotations").path(OtherNamespaceChildren.PARENT_ANNOTATION).asString())
        .isEqualTo("team/p");
    assertThat(there.path("annotations").path(OtherNamespaceChildren.CONTROLLER_ANNOTATION).asString())
        .isEqualTo("CompositeController/things");
    JsonNode here = body(fixture, "create configmaps team/here").path("metadata");
    assertThat(here.path("ownerReferences").get(0).path("uid").asString()).isEqualTo(PARENT_UID);
    assertThat(here.path("labels").has(OtherNamespaceChildren.PARENT_UID_LABEL)).isFalse();
  }

  @Test
  void underServerSideApplyToAChildElsewhereIsAppliedWithoutControllerRefAndMarked() {
    CompositeSyncFixture fixture = new CompositeSyncFixture((request, root) -> answer(request),
        Map.of(CrossNamespaceChildren.KEY, "shared"), ApplyStrategy.SERVER_SIDE_APPLY);
    parent(fixture, false);
    children.set(List.of("shared/there"));

    fixture.sync("p");

    assertThat(requests(fixture)).containsExactly("apply-create configmaps shared/there");
    JsonNode there = body(fixture, "apply-create configmaps shared/there").path("metadata");
    assertThat(there.has("ownerReferences")).isFalse();
    assertThat(there.path("labels").path(OtherNamespaceChildren.PARENT_UID_LABEL).asString()).isEqualTo(PARENT_UID);
  }

  @Test
  void aNamespaceTheAnnotationDoesNotAllowRefusesTheAnswerWholeNamingIt() {
    CompositeSyncFixture fixture = controller("tools");
    parent(fixture, false);

    assertThatThrownBy(() -> fixture.sync("p")).isInstanceOf(HookResponseException.class)
        .hasMessage("children: ConfigMap there is in namespace shared but its parent is in team, which"
            + " CompositeController things does not allow (metareactor.dev/cross-namespace-children: \"tools\");"
            + " nothing of this answer is written");
    assertThat(fixture.api().actions()).isEmpty();
  }

  @Test
  void theHookSeesItsChildrenElsewhereKeyedNamespaceSlashNameAndTheyAreUpdatedAndDeletedAsOthers() {
    CompositeSyncFixture fixture = controller("*");
    KubeObject parent = parent(fixture, false);
    fixture.configMaps().put(childElsewhere("there", parent).build());
    fixture.configMaps().put(childElsewhere("gone", parent).build());
    // A namesake of a child elsewhere in the parent's namespace, its own child: a v1 key by name alone.
    fixture.configMaps().put(object(CONFIG_MAPS, "team", "there").controlledBy(parent)
        .label(ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID).build());
    children.set(List.of("team/there", "shared/there"));

    fixture.sync("p");

    assertThat(requests.get(0).path("children").path("ConfigMap.v1").propertyNames())
        .containsExactlyInAnyOrder("there", "shared/there", "shared/gone");
    assertThat(requests(fixture)).contains("update configmaps shared/there", "delete configmaps shared/gone")
        .doesNotContain("create configmaps shared/there", "create configmaps team/there");
  }

  @Test
  void anObjectElsewhereThatIsNotTheParentsIsNeverAdoptedNorWrittenButReported() {
    CompositeSyncFixture fixture = controller("shared");
    parent(fixture, false);
    // Someone's ConfigMap of a desired child's name, even labelled as the parent's selector asks.
    fixture.configMaps().put(object(CONFIG_MAPS, "shared", "there")
        .label(ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID).build());
    children.set(List.of("shared/there"));

    fixture.sync("p");

    assertThat(requests(fixture)).isEmpty();
    assertThat(requests.get(0).path("children").path("ConfigMap.v1").isEmpty()).isTrue();
    assertThat(fixture.events()).singleElement().asString().contains("ChildConflict",
        "ConfigMap shared/there exists and is not this parent's");
  }

  @Test
  void anObjectMarkedAsAParentElsewheresChildIsNeverAdoptedInTheParentsNamespace() {
    CompositeSyncFixture fixture = controller("shared");
    parent(fixture, false);
    fixture.configMaps().put(object(CONFIG_MAPS, "team", "theirs")
        .label(ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID)
        .label(OtherNamespaceChildren.PARENT_UID_LABEL, "uid-of-a-parent-elsewhere").build());
    children.set(List.of());

    fixture.sync("p");

    assertThat(requests(fixture)).as("not adopted").isEmpty();
    assertThat(requests.get(0).path("children").path("ConfigMap.v1").isEmpty()).isTrue();
  }

  @Test
  void aChildElsewhereTheSelectorNoLongerMatchesIsReleased() {
    CompositeSyncFixture fixture = controller("shared");
    KubeObject parent = parent(fixture, false);
    fixture.configMaps().put(childElsewhere("there", parent).label(ChildSelector.CONTROLLER_UID_LABEL, "edited")
        .build());
    children.set(List.of());

    fixture.sync("p");

    assertThat(requests(fixture)).containsExactly("patch configmaps shared/there");
    assertThat(body(fixture, "patch configmaps shared/there").path("metadata").path("labels").toString())
        .isEqualTo("{\"" + OtherNamespaceChildren.PARENT_UID_LABEL + "\":null}");
  }

  @Test
  void aDeletedParentsChildrenElsewhereAreDeletedThenItsFinalizerRemovedWithoutAHookCall() {
    CompositeSyncFixture fixture = controller("shared");
    KubeObject parent = parent(fixture, true);
    fixture.configMaps().put(childElsewhere("there", parent).build());
    fixture.configMaps().put(object(CONFIG_MAPS, "team", "here").controlledBy(parent)
        .label(ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID).build());

    fixture.sync("p");

    assertThat(requests).as("no finalize hook to ask").isEmpty();
    assertThat(requests(fixture)).as("the garbage collector deletes team/here; nobody else deletes shared/there")
        .containsExactly("delete configmaps shared/there", "patch things team/p");
    assertThat(body(fixture, "patch things team/p").toString()).contains("\"op\":\"remove\"");
  }

  @Test
  void afterTheFinalizeHookSaysFinalizedTheChildrenElsewhereAreDeletedThenTheFinalizerRemoved() {
    AtomicReference<Boolean> finalized = new AtomicReference<>(false);
    List<JsonNode> finalizeRequests = new ArrayList<>();
    CompositeSyncFixture fixture = new CompositeSyncFixture((request, root) -> answer(request), (request, root) -> {
      finalizeRequests.add(request);
      return Mono.just(KubeJson.mapper().readTree("{\"children\": [{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\","
          + " \"metadata\": {\"name\": \"there\", \"namespace\": \"shared\"}, \"data\": {\"value\": \"old\"}}],"
          + " \"finalized\": " + finalized.get() + "}"));
    }, Map.of(CrossNamespaceChildren.KEY, "shared"));
    KubeObject parent = parent(fixture, true);
    fixture.configMaps().put(childElsewhere("there", parent).build());

    fixture.sync("p");
    assertThat(finalizeRequests).hasSize(1);
    assertThat(requests(fixture)).as("not finalized yet: the hook's answer keeps its child")
        .doesNotContain("delete configmaps shared/there", "patch things team/p");

    fixture.api().clearActions();
    finalized.set(true);
    fixture.sync("p");
    assertThat(requests(fixture)).as("finalized: the child elsewhere deleted, then the finalizer")
        .containsExactly("delete configmaps shared/there", "patch things team/p");
  }

  @Test
  void aChildElsewhereTheCacheDoesNotShowButTheServerHasIsNoConflict() {
    CompositeSyncFixture fixture = controller("shared");
    KubeObject parent = parent(fixture, false);
    // Created by an earlier sync, not in this replica's cache (with --sharding: another replica's label).
    fixture.api().holding(CONFIG_MAPS, childElsewhere("there", parent).build());
    children.set(List.of("shared/there"));

    fixture.sync("p");

    assertThat(requests(fixture)).containsExactly("create configmaps shared/there", "get configmaps shared/there");
    assertThat(fixture.events()).as("its own child, not someone else's").isEmpty();
  }

  @Test
  void theFinalizerStaysWhileADeletionElsewhereFails() {
    CompositeSyncFixture fixture = controller("shared");
    KubeObject parent = parent(fixture, true);
    fixture.configMaps().put(childElsewhere("there", parent).build());
    fixture.api().refusingNext("delete", 403, "Forbidden");

    assertThatThrownBy(() -> fixture.sync("p")).hasMessageContaining("can't delete ConfigMap shared/there");

    assertThat(requests(fixture)).containsExactly("delete configmaps shared/there");
  }
}
