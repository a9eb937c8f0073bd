package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * Which parents a CompositeController syncs and which children each parent owns: {@code spec.selector},
 * {@code generateSelector}, adoption and release by the ControllerRef rules, orphans routed through the selector
 * index, {@code parentResource.labelSelector}, the status-subresource rule, cluster-scoped and built-in parents.
 */
class CompositeSelectionIT extends CompositeTestBase {

  /** A controller that claims by each parent's own {@code spec.selector}. */
  private String selectorController(ParentCrd parentCrd, String method) {
    String name = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController(controllerYaml(name, parentCrd, method, hooks.url("/sync"), "")
        .replace("  generateSelector: true\n", ""));
    return name;
  }

  /** A parent spec selecting {@code app=<app>}, whose children carry {@code labels}. */
  private static Map<String, Object> selecting(String app, Map<String, String> labels, List<String> names) {
    Map<String, Object> spec = spec(names, "v1");
    spec.put("selector", Map.of("matchLabels", Map.of("app", app)));
    spec.put("labels", labels);
    return spec;
  }

  private ConfigMap configMap(String name, Map<String, String> labels, OwnerReference owner) {
    ConfigMapBuilder builder = new ConfigMapBuilder().withNewMetadata().withName(name).withLabels(labels)
        .endMetadata().addToData("value", "old");
    if (owner != null) {
      builder.editMetadata().withOwnerReferences(owner).endMetadata();
    }
    return client.configMaps().resource(builder.build()).create();
  }

  private static OwnerReference controllerRefOf(ConfigMap child) {
    List<OwnerReference> refs = child.getMetadata().getOwnerReferences();
    return refs == null ? null
        : refs.stream().filter(ref -> Boolean.TRUE.equals(ref.getController())).findFirst().orElse(null);
  }

  @Test
  void aMatchingOrphanIsAdoptedAndReleasedWhenItStopsMatching() {
    parents = ParentCrd.create(cluster, "Claim");
    selectorController(parents, "InPlace");
    ConfigMap orphan = configMap("claim-x", Map.of("app", "web"), null);
    GenericKubernetesResource parent = createParent("claim", selecting("web", Map.of("app", "web"), List.of("x")));

    ConfigMap adopted = awaitChild("claim-x", "v1");
    assertThat(adopted.getMetadata().getUid()).as("adopted and updated in place, not recreated")
        .isEqualTo(orphan.getMetadata().getUid());
    assertThat(controllerRefOf(adopted).getUid()).isEqualTo(parent.getMetadata().getUid());
    assertThat(controllerRefOf(adopted).getBlockOwnerDeletion()).isTrue();

    // It stops matching: released (not deleted), and no longer shown to the hook.
    client.configMaps().withName("claim-x").edit(cm -> new ConfigMapBuilder(cm).editMetadata()
        .addToLabels("app", "other").endMetadata().build());
    await().atMost(TIMEOUT).until(() -> controllerRefOf(client.configMaps().withName("claim-x").get()) == null);
    setSpec("claim", List.of(), "v1");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("claim")).containsEntry("observed", 0)
        .containsEntry("observedGeneration", 2));
    assertThat(client.configMaps().withName("claim-x").get().getMetadata().getUid())
        .isEqualTo(orphan.getMetadata().getUid());
  }

  @Test
  void childrenControlledBySomeoneElseAreNeverTouched() {
    parents = ParentCrd.create(cluster, "Shared");
    selectorController(parents, "InPlace");
    ConfigMap owner = configMap("someone-else", Map.of(), null);
    OwnerReference theirs = new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder().withApiVersion("v1")
        .withKind("ConfigMap").withName("someone-else").withUid(owner.getMetadata().getUid()).withController(true)
        .build();
    ConfigMap foreign = configMap("shared-foreign", Map.of("app", "web"), theirs);
    createParent("shared", selecting("web", Map.of("app", "web"), List.of()));

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("shared")).containsEntry("observed", 0));
    assertThat(hook.seen.get("shared")).isEmpty();
    ConfigMap after = client.configMaps().withName("shared-foreign").get();
    assertThat(after.getMetadata().getResourceVersion()).isEqualTo(foreign.getMetadata().getResourceVersion());
    assertThat(controllerRefOf(after).getUid()).isEqualTo(owner.getMetadata().getUid());
  }

  @Test
  void anOrphanThatAppearsLaterReachesItsParentThroughTheSelectorIndex() {
    parents = ParentCrd.create(cluster, "Late");
    selectorController(parents, "InPlace");
    createParent("late", selecting("late", Map.of("app", "late"), List.of()));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("late")).containsEntry("observed", 0));

    // No resync is configured: only the orphan's own event, routed by the index, brings the parent back. Once
    // adopted it is the parent's child, and a child the hook does not want is deleted (as upstream documents).
    configMap("late-1", Map.of("app", "late"), null);
    await().atMost(TIMEOUT).until(() -> hook.seen.getOrDefault("late", java.util.Set.of()).contains("late-1"));
    awaitGone("late-1");
    // An orphan no selector matches is left alone.
    ConfigMap bystander = configMap("late-bystander", Map.of("app", "nobody"), null);
    configMap("late-2", Map.of("app", "late"), null);
    awaitGone("late-2");
    assertThat(client.configMaps().withName("late-bystander").get().getMetadata().getResourceVersion())
        .isEqualTo(bystander.getMetadata().getResourceVersion());
  }

  @Test
  void aParentWithoutASelectorGetsASyncErrorUnlessTheControllerGeneratesOne() {
    parents = ParentCrd.create(cluster, "Naked");
    selectorController(parents, "InPlace");
    createParent("naked", spec(List.of("a"), "v1"));
    await().atMost(TIMEOUT).until(() -> hasSyncError("naked",
        "Sync error: .spec.selector must have either matchLabels, matchExpressions, or both"));
    assertThat(client.configMaps().withName("naked-a").get()).isNull();
  }

  @Test
  void desiredChildrenWhoseLabelsDoNotMatchTheSelectorAreRejectedAndNothingIsWritten() {
    parents = ParentCrd.create(cluster, "Mismatch");
    selectorController(parents, "InPlace");
    createParent("mismatch", selecting("web", Map.of("app", "other"), List.of("a")));
    await().atMost(TIMEOUT).until(() -> hasSyncError("mismatch",
        "labels on desired child ConfigMap " + cluster.namespace() + "/mismatch-a don't match parent selector"));
    assertThat(client.configMaps().withName("mismatch-a").get()).isNull();
    assertThat(status("mismatch")).as("no status either").isEmpty();
  }

  @Test
  void generatedSelectorsLabelChildrenWithTheParentsUid() {
    parents = ParentCrd.create(cluster, "Gen");
    controller(parents, "InPlace", "");
    GenericKubernetesResource parent = createParent("gen", List.of("a"), "v1");
    ConfigMap child = awaitChild("gen-a", "v1");
    assertThat(child.getMetadata().getLabels()).containsEntry("controller-uid", parent.getMetadata().getUid());
  }

  @Test
  void aClusterScopedParentPropagatesAConfigMapToSeveralNamespaces() {
    parents = ParentCrd.named("Propagation").clusterScoped().createIn(cluster);
    controller(parents, "InPlace", "");
    List<String> namespaces = List.of(cluster.namespace(), extraNamespace(), extraNamespace());
    Map<String, Object> spec = spec(List.of("settings"), "v1");
    spec.put("namespaces", namespaces);
    GenericKubernetesResource parent = createParent("propagate-" + UUID.randomUUID().toString().substring(0, 6), spec);
    String name = parent.getMetadata().getName();
    cluster.deleteAfterTest(parent);

    for (String namespace : namespaces) {
      ConfigMap copy = await().atMost(TIMEOUT).until(
          () -> client.configMaps().inNamespace(namespace).withName(name + "-settings").get(), cm -> cm != null);
      assertThat(controllerRefOf(copy).getUid()).isEqualTo(parent.getMetadata().getUid());
    }
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status(name)).containsEntry("observed", 3));
    assertThat(hook.lastRequest.get(name).path("children").path("ConfigMap.v1").propertyNames())
        .as("v1 keys namespaced children of a cluster-scoped parent by namespace/name")
        .contains(namespaces.get(1) + "/" + name + "-settings");

    spec.put("namespaces", namespaces.subList(0, 2));
    patchParent(name, Map.of("spec", spec));
    await().atMost(TIMEOUT).until(
        () -> client.configMaps().inNamespace(namespaces.get(2)).withName(name + "-settings").get() == null);
  }

  @Test
  void twoControllersOnOneCrdArePartitionedByTheirParentLabelSelectors() {
    parents = ParentCrd.create(cluster, "Team");
    try (HookServer teamA = HookServer.builder().route("/sync", r -> hook.apply(withValue(r, "from-a"))).start();
        HookServer teamB = HookServer.builder().route("/sync", r -> hook.apply(withValue(r, "from-b"))).start()) {
      for (var team : Map.of("a", teamA, "b", teamB).entrySet()) {
        engine.createController(controllerYaml("cc-team-" + team.getKey() + "-" + UUID.randomUUID().toString()
            .substring(0, 6), parents, "InPlace", team.getValue().url("/sync"), "")
            .replace("    resource: " + parents.plural() + "\n", "    resource: " + parents.plural() + "\n"
                + "    labelSelector:\n      matchLabels:\n        team: " + team.getKey() + "\n"));
      }
      for (String team : List.of("a", "b")) {
        GenericKubernetesResource parent = parents.object(cluster.namespace(), "team-" + team,
            spec(List.of("x"), "v1"));
        parent.getMetadata().setLabels(Map.of("team", team));
        parents.in(client).resource(parent).create();
      }
      awaitChild("team-a-x", "from-a");
      awaitChild("team-b-x", "from-b");
    }
  }

  @Test
  void controllersOutsideTheTargetLabelSelectorAreNotHosted() {
    parents = ParentCrd.create(cluster, "Target");
    // Created without the label this test's engine hosts (--target-label-selector).
    String foreign = "cc-foreign-" + UUID.randomUUID().toString().substring(0, 6);
    cluster.deleteAfterTest(client.genericKubernetesResources(EngineUnderTest.COMPOSITE_CONTROLLERS).resource(
        client.getKubernetesSerialization().unmarshal(controllerYaml(foreign, parents, "InPlace",
            hooks.url("/sync"), ""), GenericKubernetesResource.class)).create());
    createParent("ignored", List.of("a"), "v1");
    // A hosted controller on another type, created later: once it has synced, the foreign one would have too.
    ParentCrd clock = ParentCrd.create(cluster, "Clock");
    controller(clock, "InPlace", "");
    clock.in(client).resource(clock.object(cluster.namespace(), "clock", spec(List.of("a"), "v1"))).create();
    awaitChild("clock-a", "v1");

    assertThat(engine.engine().host(CompositeController.KIND).orElseThrow().phase(foreign)).isEmpty();
    assertThat(hook.calls("ignored")).isZero();
    assertThat(client.configMaps().withName("ignored-a").get()).isNull();
  }

  @Test
  void withIgnoreStatusChangesAStatusOnlyChangeDoesNotSyncButALabelChangeDoes() {
    parents = ParentCrd.create(cluster, "Quiet");
    String controller = "cc-quiet-" + UUID.randomUUID().toString().substring(0, 6);
    engine.createController(controllerYaml(controller, parents, "InPlace", hooks.url("/sync"), "")
        .replace("    resource: " + parents.plural() + "\n", "    resource: " + parents.plural() + "\n"
            + "    ignoreStatusChanges: true\n"));
    createParent("quiet", List.of("a"), "v1");
    createParent("clock", List.of("a"), "v1");
    awaitChild("quiet-a", "v1");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("quiet")).containsEntry("observed", 1));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("clock")).containsEntry("observed", 1));
    int before = hook.calls("quiet");

    // Someone else writes the status only: no sync. A later label change of another parent is the clock.
    parents.in(client).withName("quiet").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"status\":{\"note\":\"written by someone else\"}}");
    int clockBefore = hook.calls("clock");
    patchParent("clock", Map.of("metadata", Map.of("labels", Map.of("tick", "1"))));
    await().atMost(TIMEOUT).until(() -> hook.calls("clock") > clockBefore);
    assertThat(hook.calls("quiet")).as("a status-only change is ignored").isEqualTo(before);

    patchParent("quiet", Map.of("metadata", Map.of("labels", Map.of("tick", "1"))));
    await().atMost(TIMEOUT).until(() -> hook.calls("quiet") > before);
  }

  @Test
  void aParentCrdWithoutTheStatusSubresourceIsIgnoredWithUpstreamsWarning() {
    parents = ParentCrd.named("Statusless").withoutStatusSubresource().createIn(cluster);
    String controller = controller(parents, "InPlace", "");
    createParent("statusless", List.of("a"), "v1");
    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", controller, "SyncError",
        "[" + controller + "] Sync error - ignoring, CRD [" + parents.plural() + "." + parents.group()
            + "] does not have subresource 'Status' enabled"));
    assertThat(engine.eventsAbout("default", controller)).filteredOn(e -> e.getReason().equals("SyncError"))
        .singleElement().satisfies(e -> assertThat(e.getType()).isEqualTo("Warning"));
    assertThat(hook.calls("statusless")).isZero();
  }

  @Test
  void aBuiltInResourceWithAStatusSubresourceCanBeAParent() {
    String team = "builtin-" + UUID.randomUUID().toString().substring(0, 6);
    // A Deployment has no spec.names or spec.value: this hook adds them to what the test hook is shown.
    try (HookServer deploymentHook = HookServer.builder().route("/sync", request -> {
      ObjectNode copy = (ObjectNode) request.deepCopy();
      ((ObjectNode) copy.path("parent").path("spec")).put("value", "from-a-deployment").putArray("names").add("cfg");
      return hook.apply(copy);
    }).start()) {
      engine.createController("""
          apiVersion: metacontroller.k8s.io/v1alpha1
          kind: CompositeController
          metadata:
            name: cc-%s
          spec:
            generateSelector: true
            parentResource:
              apiVersion: apps/v1
              resource: deployments
              labelSelector:
                matchLabels:
                  team: %s
            childResources:
            - apiVersion: v1
              resource: configmaps
            hooks:
              sync:
                webhook:
                  url: %s
          """.formatted(team, team, deploymentHook.url("/sync")));
      Deployment deployment = client.apps().deployments().resource(new DeploymentBuilder()
          .withNewMetadata().withName("web").addToLabels("team", team).endMetadata()
          .withNewSpec().withNewSelector().addToMatchLabels("app", "web").endSelector()
          .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
          .withNewSpec().addNewContainer().withName("web").withImage("nginx").endContainer().endSpec().endTemplate()
          .endSpec().build()).create();
      ConfigMap child = awaitChild("web-cfg", "from-a-deployment");
      assertThat(controllerRefOf(child).getKind()).isEqualTo("Deployment");
      assertThat(controllerRefOf(child).getUid()).isEqualTo(deployment.getMetadata().getUid());
    }
  }
}
