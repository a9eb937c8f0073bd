package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * CompositeController end to end against a real API server: the sync path, update methods, the hosted-controller
 * lifecycle, readiness and metrics, and the steady state. The hook is {@link ConfigMapHook}.
 */
class CompositeControllerIT extends CompositeTestBase {

  @Test
  void syncCreatesChildrenWritesStatusAndUpdatesChildrenInPlace() {
    parents = ParentCrd.create(cluster, "Web");
    String controller = controller(parents, "InPlace", "");
    GenericKubernetesResource parent = createParent("web", List.of("a", "b"), "v1");

    ConfigMap a = awaitChild("web-a", "v1");
    awaitChild("web-b", "v1");
    OwnerReference ref = a.getMetadata().getOwnerReferences().get(0);
    assertThat(ref.getUid()).isEqualTo(parent.getMetadata().getUid());
    assertThat(ref.getKind()).isEqualTo("Web");
    assertThat(ref.getController()).isTrue();
    assertThat(a.getMetadata().getAnnotations()).containsKey("metacontroller.k8s.io/last-applied-configuration");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("web"))
        .containsEntry("children", 2).containsEntry("observed", 2).containsEntry("observedGeneration", 1));

    // InPlace: a changed child is updated, not replaced; a child the hook no longer returns is deleted.
    setSpec("web", List.of("a"), "v2");
    ConfigMap updated = awaitChild("web-a", "v2");
    assertThat(updated.getMetadata().getUid()).isEqualTo(a.getMetadata().getUid());
    awaitGone("web-b");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("web"))
        .containsEntry("children", 1).containsEntry("observedGeneration", 2));

    engine.awaitReady();
    assertThat(engine.get(false, "/readyz").statusCode()).isEqualTo(200);
    assertThat(engine.get(false, "/healthz").statusCode()).isEqualTo(200);
    String metrics = engine.get(true, "/metrics").body();
    assertThat(metrics)
        .contains("workqueue_adds_total{controller=\"" + controller + "\",name=\"CompositeController-" + controller)
        .contains("workqueue_depth{controller=\"" + controller + "\"")
        .contains("metacontroller_sync_requests_total{code=\"200\",controller_name=\"" + controller + "\"")
        .contains("metareactor_api_requests_total{code=\"2xx\",resource=\"configmaps\",verb=\"create\"}")
        .contains("metareactor_api_requests_total{code=\"2xx\",resource=\"configmaps\",verb=\"delete\"}");
    assertThat(engine.hasEvent("default", controller, "Started", "Started controller: " + controller)).isTrue();
  }

  @Test
  void theSyncRequestHasUpstreamsV1Shape() {
    parents = ParentCrd.create(cluster, "Page");
    String controller = controller(parents, "InPlace", "");
    createParent("page", List.of(), "v1");

    await().atMost(TIMEOUT).until(() -> hook.lastRequest.containsKey("page"));
    JsonNode first = hook.lastRequest.get("page");
    assertThat(first.propertyNames()).containsExactlyInAnyOrder(
        "controller", "parent", "children", "related", "finalizing");
    assertThat(first.path("controller").path("kind").asString()).isEqualTo("CompositeController");
    assertThat(first.path("controller").path("metadata").path("name").asString()).isEqualTo(controller);
    assertThat(first.path("controller").path("spec").path("parentResource").path("resource").asString())
        .isEqualTo(parents.plural());
    assertThat(first.path("parent").path("metadata").path("name").asString()).isEqualTo("page");
    assertThat(first.path("parent").path("spec").path("value").asString()).isEqualTo("v1");
    assertThat(first.path("children").propertyNames()).as("an entry for every child rule, even empty")
        .containsExactly("ConfigMap.v1");
    assertThat(first.path("children").path("ConfigMap.v1").isEmpty()).isTrue();
    assertThat(first.path("related").isObject()).isTrue();
    assertThat(first.path("related").isEmpty()).isTrue();
    assertThat(first.path("finalizing").isBoolean()).isTrue();
    assertThat(first.path("finalizing").booleanValue()).isFalse();

    setSpec("page", List.of("a"), "v1");
    await().atMost(TIMEOUT).until(() -> hook.lastRequest.get("page").path("children").path("ConfigMap.v1")
        .has("page-a"));
    JsonNode child = hook.lastRequest.get("page").path("children").path("ConfigMap.v1").path("page-a");
    assertThat(child.path("kind").asString()).isEqualTo("ConfigMap");
    assertThat(child.path("metadata").path("namespace").asString()).isEqualTo(cluster.namespace());
    assertThat(child.path("data").path("value").asString()).isEqualTo("v1");
  }

  @Test
  void v2HooksSeeNamespaceSlashNameKeysAndAreStrictWhereV1IsLoose() {
    ParentCrd v1 = ParentCrd.create(cluster, "Loose");
    parents = ParentCrd.create(cluster, "Strict");
    // Both hooks answer a field no version knows.
    try (HookServer extra = HookServer.builder()
        .route("/sync", request -> ((ObjectNode) hook.apply(request)).put("unknownField", 1)).start()) {
      engine.createController(controllerYaml("cc-v1-" + UUID.randomUUID().toString().substring(0, 6), v1, "InPlace",
          extra.url("/sync"), ""));
      engine.createController(controllerYaml("cc-v2-" + UUID.randomUUID().toString().substring(0, 6), parents,
          "InPlace", extra.url("/sync"), "").replace("    sync:\n", "    sync:\n      version: v2\n"));
      v1.in(client).resource(v1.object(cluster.namespace(), "loose", spec(List.of("a"), "v1"))).create();
      createParent("strict", List.of("a"), "v1");

      awaitChild("loose-a", "v1");
      await().atMost(TIMEOUT).until(() -> hasSyncError("strict",
          "strict validation failed: unknown field \"unknownField\""));
      assertThat(client.configMaps().withName("strict-a").get()).isNull();
      assertThat(hook.lastRequest.get("loose").path("children").path("ConfigMap.v1").propertyNames())
          .containsExactly("loose-a");
      assertThat(hook.lastRequest.get("strict").path("children").path("ConfigMap.v1").isEmpty()).isTrue();
    }
    // A v2 hook that answers cleanly sees its children keyed namespace/name.
    try (HookServer clean = HookServer.builder().route("/sync", hook).start()) {
      ParentCrd keys = ParentCrd.create(cluster, "Keys");
      engine.createController(controllerYaml("cc-keys-" + UUID.randomUUID().toString().substring(0, 6), keys,
          "InPlace", clean.url("/sync"), "").replace("    sync:\n", "    sync:\n      version: v2\n"));
      keys.in(client).resource(keys.object(cluster.namespace(), "keys", spec(List.of("a"), "v1"))).create();
      awaitChild("keys-a", "v1");
      await().atMost(TIMEOUT).until(() -> hook.lastRequest.get("keys").path("children").path("ConfigMap.v1")
          .has(cluster.namespace() + "/keys-a"));
    }
  }

  @Test
  void onDeleteLeavesAChangedChildAloneUntilSomeoneDeletesIt() {
    parents = ParentCrd.create(cluster, "Cron");
    controller(parents, "OnDelete", "");
    createParent("cron", List.of("a"), "v1");
    ConfigMap before = awaitChild("cron-a", "v1");

    setSpec("cron", List.of("a"), "v2");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("cron")).containsEntry("observedGeneration", 2));
    ConfigMap unchanged = client.configMaps().withName("cron-a").get();
    assertThat(unchanged.getData()).containsEntry("value", "v1");
    assertThat(unchanged.getMetadata().getUid()).isEqualTo(before.getMetadata().getUid());

    client.configMaps().withName("cron-a").delete();
    ConfigMap recreated = awaitChild("cron-a", "v2");
    assertThat(recreated.getMetadata().getUid()).isNotEqualTo(before.getMetadata().getUid());
  }

  @Test
  void resyncAfterSecondsCallsTheHookAgainWithoutAnyChange() {
    parents = ParentCrd.create(cluster, "Poll");
    controller(parents, "InPlace", "");
    hook.resyncAfterSeconds = 0.1;
    createParent("poll", List.of("a"), "v1");
    awaitChild("poll-a", "v1");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("poll")).containsEntry("observed", 1));

    // Nothing changes any more and the controller has no resyncPeriodSeconds: only resyncAfterSeconds can
    // bring the parent back, ten times a second.
    int converged = hook.calls("poll");
    await().atMost(TIMEOUT).until(() -> hook.calls("poll") >= converged + 10);
  }

  @Test
  void recreateDeletesAChangedChildAndTheNextSyncCreatesItAgain() {
    parents = ParentCrd.create(cluster, "Job");
    controller(parents, "Recreate", "");
    createParent("job", List.of("a"), "v1");
    ConfigMap before = awaitChild("job-a", "v1");

    setSpec("job", List.of("a"), "v2");
    ConfigMap after = awaitChild("job-a", "v2");
    assertThat(after.getMetadata().getUid()).isNotEqualTo(before.getMetadata().getUid());
  }

  @Test
  void aFailingHookGivesSyncErrorEventsAndTheParentRecoversWithTheHook() {
    parents = ParentCrd.create(cluster, "Site");
    controller(parents, "InPlace", "");
    hook.failing = true;
    createParent("site", List.of("a"), "v1");

    await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "site", "SyncError", "500"));
    assertThat(engine.eventsAbout(cluster.namespace(), "site"))
        .filteredOn(event -> event.getReason().equals("SyncError"))
        .allSatisfy(event -> {
          assertThat(event.getType()).isEqualTo("Warning");
          assertThat(event.getMessage()).startsWith("Sync error: ").contains("hook is down");
        });
    assertThat(client.configMaps().withName("site-a").get()).isNull();

    hook.failing = false;
    awaitChild("site-a", "v1");
  }

  @Test
  void deletingTheControllerStopsItsSyncsAndLeavesOtherControllersRunning() {
    parents = ParentCrd.create(cluster, "Shop");
    ParentCrd others = ParentCrd.create(cluster, "Blog");
    ConfigMapHook otherHook = new ConfigMapHook();
    try (HookServer otherHooks = HookServer.builder().route("/sync", otherHook).start()) {
      String stopped = controller(parents, "InPlace", "");
      engine.createController(controllerYaml("cc-other-" + UUID.randomUUID().toString().substring(0, 8), others,
          "InPlace", otherHooks.url("/sync"), ""));
      createParent("shop", List.of("a"), "v1");
      awaitChild("shop-a", "v1");

      engine.deleteController(stopped);
      await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", stopped, "Stopped", "Stopped controller: "));
      assertThat(engine.engine().host(CompositeController.KIND).orElseThrow().phase(stopped)).isEmpty();

      // A parent of the stopped controller, then one of the running controller: by the time the second is
      // synced, the first would have been too had its controller still run.
      createParent("shop2", List.of("a"), "v1");
      others.in(client).resource(others.object(cluster.namespace(), "blog", spec(List.of("a"), "v1"))).create();
      awaitChild("blog-a", "v1");
      assertThat(client.configMaps().withName("shop2-a").get()).isNull();
      assertThat(hook.calls).doesNotContainKey("shop2");
    }
  }

  @Test
  void editingTheControllerSpecRebuildsItWithTheNewSpec() {
    parents = ParentCrd.create(cluster, "Feed");
    ConfigMapHook secondHook = new ConfigMapHook();
    try (HookServer second = HookServer.builder()
        .route("/sync", request -> secondHook.apply(withValue(request, "from-the-second-hook"))).start()) {
      String controller = controller(parents, "InPlace", "");
      createParent("feed", List.of("a"), "v1");
      awaitChild("feed-a", "v1");

      client.genericKubernetesResources(EngineUnderTest.COMPOSITE_CONTROLLERS).withName(controller).edit(cc -> {
        cc.setAdditionalProperty("spec", Map.of(
            "generateSelector", true,
            "parentResource", Map.of("apiVersion", parents.apiVersion(), "resource", parents.plural()),
            "childResources", List.of(Map.of("apiVersion", "v1", "resource", "configmaps",
                "updateStrategy", Map.of("method", "InPlace"))),
            "hooks", Map.of("sync", Map.of("webhook", Map.of("url", second.url("/sync"))))));
        return cc;
      });
      awaitChild("feed-a", "from-the-second-hook");
      assertThat(engine.hasEvent("default", controller, "Stopped", "Stopped controller: " + controller)).isTrue();
      await().atMost(TIMEOUT).until(() -> engine.eventsAbout("default", controller).stream()
          .filter(event -> event.getReason().equals("Started")).mapToInt(event -> event.getCount()).sum() == 2);
    }
  }

  @Test
  void aControllerForACrdCreatedLaterStartsByItself() {
    parents = ParentCrd.named("Gizmo");
    String controller = controller(parents, "InPlace", "");
    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", controller, "CreateError",
        "can't find resource gizmos in apiVersion " + parents.apiVersion()));

    parents.createIn(cluster);
    createParent("gizmo", List.of("a"), "v1");
    awaitChild("gizmo-a", "v1");
    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", controller, "Started", "Started controller: "));
  }

  @Test
  void anInvalidControllerGetsACreateErrorNamingTheProblemAndOthersStillWork() {
    parents = ParentCrd.create(cluster, "Queue");
    String invalid = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    // Valid for the CRD's schema, not for the engine: a webhook with a path but no url or service.
    engine.createController(controllerYaml(invalid, parents, "InPlace", hooks.url("/sync"), "")
        .replace("url: " + hooks.url("/sync"), "path: /sync"));
    String valid = controller(parents, "InPlace", "");

    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", invalid, "CreateError",
        "Cannot create new controller: spec.hooks.sync.webhook: invalid webhook config: must specify either a "
        + "full 'url', or both 'service' and 'path'"));
    assertThat(engine.eventsAbout("default", invalid))
        .filteredOn(event -> event.getReason().equals("CreateError"))
        .allSatisfy(event -> assertThat(event.getType()).isEqualTo("Warning"));
    createParent("queue", List.of("a"), "v1");
    awaitChild("queue-a", "v1");
    assertThat(engine.hasEvent("default", valid, "Started", "Started controller: " + valid)).isTrue();
  }

  /**
   * A CEL sync hook on the real API server, with {@link ConfigMapHook} (served apart, so that the test's own hook
   * sees no call) as its shadow: the engine compares every CEL answer with the webhook's as the API server would
   * take them (the writes each would make), and none differs.
   */
  @Test
  void aCelSyncHookConvergesWithoutAWebhookAndOneThatDoesNotCompileIsACreateErrorNamingWhere() {
    parents = ParentCrd.create(cluster, "Greeter");
    String webhook = "      webhook:\n        url: " + hooks.url("/sync") + "\n";
    String cel = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    ConfigMapHook sameInJava = new ConfigMapHook();
    HookServer shadow = HookServer.builder().route("/sync", sameInJava).start();
    // ConfigMapHook's sync, in CEL: one ConfigMap per name with the parent's value; what it was shown in status.
    engine.createController(controllerYaml(cel, parents, "InPlace", hooks.url("/sync"), "").replace(
        "  name: " + cel + "\n", "  name: " + cel + "\n  annotations: {metareactor.dev/shadow-sync-url: \""
            + shadow.url("/sync") + "\"}\n").replace(webhook, """
        cel:
          expression: |
            {'children': parent.spec.names.map(n, {'apiVersion': 'v1', 'kind': 'ConfigMap',
               'metadata': {'name': parent.metadata.name + '-' + n}, 'data': {'value': parent.spec.value}}),
             'status': {'children': parent.spec.names.size(), 'observed': children['ConfigMap.v1'].size()}}
        """.indent(6)));
    String broken = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController(controllerYaml(broken, parents, "InPlace", hooks.url("/sync"), "").replace(webhook,
        "      cel:\n        expression: \"{'children': [parent.metadata.nam +]}\"\n"));

    createParent("greeter", List.of("a"), "v1");
    awaitChild("greeter-a", "v1");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("greeter"))
        .containsEntry("children", 1).containsEntry("observed", 1).containsEntry("observedGeneration", 1));
    setSpec("greeter", List.of("a"), "v2");
    awaitChild("greeter-a", "v2");
    assertThat(hook.calls("greeter")).as("webhook calls").isZero();
    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", broken, "CreateError",
        "Cannot create new controller: spec.hooks.sync.cel.expression: 1:36: mismatched input ']'"));
    try (shadow) {
      await().atMost(TIMEOUT).until(() -> engine.shadowSyncs(cel, "same") >= 2);
      assertThat(engine.shadowSyncs(cel, "differs")).as("CEL answers the webhook gave otherwise").isZero();
      assertThat(sameInJava.calls("greeter")).as("the shadow's calls").isPositive();
    }
  }

  @Test
  void aSteadyStateResyncOfAHundredParentsMakesNoApiRequest() {
    parents = ParentCrd.create(cluster, "Tenant");
    controller(parents, "InPlace", "  resyncPeriodSeconds: 1\n");
    List<String> names = IntStream.range(0, 100).mapToObj(i -> "tenant-" + i).toList();
    names.forEach(name -> createParent(name, List.of("a"), "v1"));

    // Converged: every parent's status says its hook saw the one child it asked for.
    await().atMost(Duration.ofMinutes(2)).until(() -> parents.in(client).inNamespace(cluster.namespace()).list()
        .getItems().stream().filter(p -> Integer.valueOf(1).equals(statusOf(p).get("observed"))).count() == 100);

    // Then, eventually, a whole round of resyncs (each parent's hook called twice more) makes no API request at
    // all. An engine that wrote or read on every resync never gets there.
    await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ZERO).until(() -> {
      double requestsBefore = engine.apiRequests();
      Map<String, Integer> callsBefore = hook.snapshot(names);
      await().atMost(TIMEOUT).until(() -> names.stream().allMatch(n -> hook.calls(n) >= callsBefore.get(n) + 2));
      return engine.apiRequests() == requestsBefore;
    });
    assertThat(engine.apiRequests(counter -> "get".equals(counter.getId().getTag("verb"))))
        .as("no GET at any time").isZero();
  }

}
