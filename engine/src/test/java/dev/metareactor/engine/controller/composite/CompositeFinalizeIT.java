package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The finalize hook and the controller's finalizer: ordered teardown, other finalizers left alone, finalizing when
 * a parent stops matching the controller's label selector, the finalizer removed when the controller or its
 * finalize hook goes, and the garbage collector's foreground deletion respected.
 */
class CompositeFinalizeIT extends CompositeTestBase {

  private static final String FOREIGN = "example.com/hold";

  /** The lines that give a controller the test hook as its finalize hook too (appended inside hooks). */
  private String finalizeHook() {
    return "    finalize:\n      webhook:\n        url: " + hooks.url("/sync") + "\n";
  }

  private static String finalizerOf(String controller) {
    return "metacontroller.io/compositecontroller-" + controller;
  }

  private List<String> finalizers(String parent) {
    GenericKubernetesResource object = parents.in(client).withName(parent).get();
    return object == null || object.getMetadata().getFinalizers() == null ? List.of()
        : object.getMetadata().getFinalizers();
  }

  private void awaitFinalizers(String parent, String... expected) {
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(finalizers(parent)).containsExactly(expected));
  }

  @Test
  void deletionRunsTheFinalizeHookForAnOrderedTeardownAndLeavesOtherFinalizersAlone() {
    parents = ParentCrd.create(cluster, "Cat");
    String controller = controller(parents, "InPlace", finalizeHook());
    createParent("cats", List.of("a", "b", "c"), "v1");
    List.of("cats-a", "cats-b", "cats-c").forEach(child -> awaitChild(child, "v1"));
    awaitFinalizers("cats", finalizerOf(controller));
    assertThat(hook.finalizeCalls).doesNotContainKey("cats");

    parents.in(client).withName("cats").patch(PatchContext.of(PatchType.JSON),
        "[{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":\"" + FOREIGN + "\"}]");
    parents.in(client).withName("cats").delete();

    // Our finalizer goes once the hook says finalized; the foreign one keeps the parent.
    awaitFinalizers("cats", FOREIGN);
    assertThat(parents.in(client).withName("cats").get().getMetadata().getDeletionTimestamp()).isNotNull();
    List.of("cats-a", "cats-b", "cats-c").forEach(this::awaitGone);
    List<List<String>> calls = hook.finalizeCalls.get("cats");
    assertThat(calls.get(0)).containsExactly("cats-a", "cats-b", "cats-c");
    assertThat(calls.get(calls.size() - 1)).isEmpty();
    List<String> all = List.of("cats-a", "cats-b", "cats-c");
    assertThat(calls).as("one child at a time, the last by name first")
        .allSatisfy(observed -> assertThat(observed).isEqualTo(all.subList(0, observed.size())));
    assertThat(hook.lastRequest.get("cats").path("finalizing").booleanValue()).isTrue();

    parents.in(client).withName("cats").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"finalizers\":null}}");
    await().atMost(TIMEOUT).until(() -> parents.in(client).withName("cats").get() == null);
  }

  @Test
  void aParentThatStopsMatchingTheControllersLabelSelectorIsFinalizedButNotDeleted() {
    parents = ParentCrd.create(cluster, "Opt");
    String controller = "cc-opt-" + java.util.UUID.randomUUID().toString().substring(0, 6);
    engine.createController(controllerYaml(controller, parents, "InPlace", hooks.url("/sync"), finalizeHook())
        .replace("    resource: " + parents.plural() + "\n", "    resource: " + parents.plural() + "\n"
            + "    labelSelector:\n      matchLabels:\n        managed: \"yes\"\n"));
    GenericKubernetesResource parent = parents.object(cluster.namespace(), "opt", spec(List.of("a"), "v1"));
    parent.getMetadata().setLabels(Map.of("managed", "yes"));
    parents.in(client).resource(parent).create();
    awaitChild("opt-a", "v1");
    awaitFinalizers("opt", finalizerOf(controller));

    patchParent("opt", Map.of("metadata", Map.of("labels", Map.of("managed", "no"))));
    awaitGone("opt-a");
    awaitFinalizers("opt");
    assertThat(hook.finalizeCalls.get("opt")).isNotEmpty();
    assertThat(parents.in(client).withName("opt").get().getMetadata().getDeletionTimestamp()).isNull();
  }

  @Test
  void deletingTheControllerRemovesItsFinalizerFromEveryParent() {
    parents = ParentCrd.create(cluster, "Orphaned");
    String controller = controller(parents, "InPlace", finalizeHook());
    createParent("one", List.of("a"), "v1");
    createParent("two", List.of("a"), "v1");
    awaitFinalizers("one", finalizerOf(controller));
    awaitFinalizers("two", finalizerOf(controller));

    engine.deleteController(controller);
    awaitFinalizers("one");
    awaitFinalizers("two");
    assertThat(parents.in(client).withName("one").get()).isNotNull();
    assertThat(engine.hasEvent("default", controller, "Stopped", "Stopped controller: " + controller)).isTrue();
  }

  @Test
  void removingTheFinalizeHookRemovesTheFinalizerFromParents() {
    parents = ParentCrd.create(cluster, "Hookless");
    String controller = controller(parents, "InPlace", finalizeHook());
    createParent("hookless", List.of("a"), "v1");
    awaitFinalizers("hookless", finalizerOf(controller));

    client.genericKubernetesResources(EngineUnderTest.COMPOSITE_CONTROLLERS).withName(controller)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"hooks\":{\"finalize\":null}}}");
    awaitFinalizers("hookless");
    awaitChild("hookless-a", "v1");
  }

  @Test
  void whileTheGarbageCollectorDeletesChildrenInTheForegroundTheEngineLeavesThemToIt() {
    parents = ParentCrd.create(cluster, "Fore");
    String controller = controller(parents, "InPlace", finalizeHook());
    createParent("fore", List.of("a", "b"), "v1");
    awaitChild("fore-a", "v1");
    awaitChild("fore-b", "v1");
    awaitFinalizers("fore", finalizerOf(controller));
    double deletesBefore = configMapDeletes();

    parents.in(client).withName("fore").withPropagationPolicy(DeletionPropagation.FOREGROUND).delete();
    // The garbage collector learns of a new CRD at its next discovery resync (up to 30 s).
    await().atMost(Duration.ofSeconds(120)).until(() -> parents.in(client).withName("fore").get() == null);
    assertThat(client.configMaps().withName("fore-a").get()).isNull();
    assertThat(configMapDeletes()).as("the garbage collector deleted the children, not the engine")
        .isEqualTo(deletesBefore);
    assertThat(hook.finalizeCalls.get("fore")).isNotEmpty();
  }

  /** The engine's deletes of ConfigMaps that deleted one. */
  private double configMapDeletes() {
    // Deletes the API server carried out: once the garbage collector has deleted the children and dropped its
    // finalizer, a sync of the parent (held by ours while the teardown hook runs) may still see them in a cache
    // that has not had their DELETE events yet, and its deletes find them gone (404), which a whole run saw.
    return engine.apiRequests(counter -> "delete".equals(counter.getId().getTag("verb"))
        && "configmaps".equals(counter.getId().getTag("resource")) && "2xx".equals(counter.getId().getTag("code")));
  }
}
