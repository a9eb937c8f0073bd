package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * DecoratorController end to end: attachments, label/annotation/status writes, resyncAfterSeconds, customize, v2,
 * finalize on opt-out and on deletion, retiring, and malformed answers. Targets are objects of a CRD made for each
 * test, selected by the annotation {@code decorate}; the hook is {@link DecorateHook}.
 */
@LocalKubernetes
class DecoratorControllerIT {

  private LocalCluster cluster;
  private KubernetesClient client;
  private EngineUnderTest engine;
  private final DecorateHook hook = new DecorateHook();
  private HookServer hooks;
  private ParentCrd targets;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.hooks = HookServer.builder().route("/sync", hook).start();
    this.engine = EngineUnderTest.start(cluster);
  }

  @AfterEach
  void stop() {
    engine.close();
    hooks.close();
  }

  /**
   * The hook: for a target with annotation {@code attach: a,b}, attachments {@code <target>-a}, {@code <target>-b}
   * (ConfigMaps with {@code data.value} = annotation {@code value}); labels {@code decorated: yes} and
   * {@code remove-me: null}; annotation {@code decorated-by}; status {@code {attachments: n}} when the target has the
   * annotation {@code status}; {@code resyncAfterSeconds} when set. Finalizing: keeps all observed attachments but
   * the last by name; finalized once it is shown none.
   */
  static final class DecorateHook implements Function<JsonNode, JsonNode> {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    final Map<String, JsonNode> lastRequest = new ConcurrentHashMap<>();
    final Map<String, Integer> finalizeCalls = new ConcurrentHashMap<>();
    volatile Double resyncAfterSeconds;

    @Override
    public JsonNode apply(JsonNode request) {
      JsonNode object = request.path("object");
      String name = object.path("metadata").path("name").asString();
      calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
      lastRequest.put(name, request);
      JsonNode notes = object.path("metadata").path("annotations");
      List<String> observed = request.path("attachments").path("ConfigMap.v1").properties().stream()
          .map(e -> e.getValue().path("metadata").path("name").asString()).sorted().toList();
      ObjectNode answer = NODES.objectNode();
      ArrayNode attachments = answer.putArray("attachments");
      if (request.path("finalizing").booleanValue()) {
        finalizeCalls.merge(name, 1, Integer::sum);
        observed.subList(0, Math.max(0, observed.size() - 1)).forEach(keep -> attach(attachments, keep, notes));
        answer.put("finalized", observed.isEmpty());
      } else {
        for (String suffix : notes.path("attach").asString("").split(",")) {
          if (!suffix.isBlank()) {
            attach(attachments, name + "-" + suffix.strip(), notes);
          }
        }
        answer.putObject("labels").put("decorated", "yes").putNull("remove-me");
        answer.putObject("annotations").put("decorated-by", request.path("controller").path("metadata")
            .path("name").asString());
        if (notes.has("status")) {
          answer.putObject("status").put("attachments", observed.size());
        }
      }
      if (resyncAfterSeconds != null) {
        answer.put("resyncAfterSeconds", resyncAfterSeconds);
      }
      return answer;
    }

    private static void attach(ArrayNode attachments, String name, JsonNode notes) {
      ObjectNode attachment = attachments.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      attachment.putObject("metadata").put("name", name);
      attachment.putObject("data").put("value", notes.path("value").asString("v1"));
    }

    int calls(String target) {
      AtomicInteger count = calls.get(target);
      return count == null ? 0 : count.get();
    }
  }

  private String decorator(String url, String extraHooks, String extraSpec) {
    return decoratorWithHooks("""
            sync:
              webhook:
                url: %s
        """.formatted(url) + extraHooks, extraSpec);
  }

  /**
   * Creates a DecoratorController of the targets (those annotated {@code decorate}) attaching ConfigMaps in place,
   * with these hooks (YAML under {@code spec.hooks}, indented by four spaces); returns its name.
   */
  private String decoratorWithHooks(String hooksYaml, String extraSpec) {
    String name = "dc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: %s
        spec:
          resources:
          - apiVersion: %s
            resource: %s
            annotationSelector:
              matchExpressions:
              - {key: decorate, operator: Exists}
          attachments:
          - apiVersion: v1
            resource: configmaps
            updateStrategy:
              method: InPlace
          hooks:
        """.formatted(name, targets.apiVersion(), targets.plural()) + hooksYaml + extraSpec);
    return name;
  }

  private GenericKubernetesResource createTarget(String name, Map<String, String> annotations,
      Map<String, String> labels) {
    GenericKubernetesResource target = targets.object(cluster.namespace(), name, Map.of("size", 1));
    target.getMetadata().setAnnotations(new HashMap<>(annotations));
    target.getMetadata().setLabels(new HashMap<>(labels));
    return targets.in(client).resource(target).create();
  }

  private GenericKubernetesResource target(String name) {
    return targets.in(client).withName(name).get();
  }

  private void annotate(String name, Map<String, Object> annotations) {
    targets.in(client).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
        client.getKubernetesSerialization().asJson(Map.of("metadata", Map.of("annotations", annotations))));
  }

  private ConfigMap awaitAttachment(String name, String value) {
    return await().atMost(TIMEOUT).until(() -> client.configMaps().withName(name).get(),
        cm -> cm != null && value.equals(cm.getData().get("value")));
  }

  private void awaitGone(String configMap) {
    await().atMost(TIMEOUT).until(() -> client.configMaps().withName(configMap).get() == null);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> statusOf(String name) {
    Object status = target(name).getAdditionalProperties().get("status");
    return status instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
  }

  private List<String> finalizers(String name) {
    List<String> finalizers = target(name).getMetadata().getFinalizers();
    return finalizers == null ? List.of() : finalizers;
  }

  @Test
  void syncAttachesLabelsAnnotatesAndReplacesStatus() {
    targets = ParentCrd.create(cluster, "Site");
    String decorator = decorator(hooks.url("/sync"), "", "");
    GenericKubernetesResource site = createTarget("site",
        Map.of("decorate", "", "attach", "a,b", "status", ""), Map.of("remove-me", "x", "keep", "y"));
    createTarget("plain", Map.of(), Map.of());

    ConfigMap a = awaitAttachment("site-a", "v1");
    awaitAttachment("site-b", "v1");
    OwnerReference ref = a.getMetadata().getOwnerReferences().get(0);
    assertThat(ref.getUid()).isEqualTo(site.getMetadata().getUid());
    assertThat(ref.getController()).isTrue();
    assertThat(a.getMetadata().getAnnotations())
        .containsEntry("metacontroller.k8s.io/decorator-controller", decorator)
        .containsKey("metacontroller.k8s.io/last-applied-configuration");
    await().atMost(TIMEOUT).untilAsserted(() -> {
      GenericKubernetesResource now = target("site");
      assertThat(now.getMetadata().getLabels()).containsEntry("decorated", "yes").containsEntry("keep", "y")
          .doesNotContainKey("remove-me");
      assertThat(now.getMetadata().getAnnotations()).containsEntry("decorated-by", decorator);
      assertThat(statusOf("site")).as("replaced, without observedGeneration").isEqualTo(Map.of("attachments", 2));
    });
    JsonNode request = hook.lastRequest.get("site");
    assertThat(request.propertyNames()).containsExactlyInAnyOrder(
        "controller", "object", "attachments", "related", "finalizing");
    assertThat(request.path("attachments").path("ConfigMap.v1").propertyNames()).contains("site-a", "site-b");
    assertThat(hook.calls("plain")).as("not selected").isZero();

    // An attachment deleted behind the engine's back is made again, and the ring of recent syncs keeps why.
    client.configMaps().withName("site-a").delete();
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(
        engine.keptCauses("decoratorcontroller", decorator, cluster.namespace(), "site")).anySatisfy(cause ->
            assertThat(cause.toString()).contains("\"cause\":\"child\"", "\"kind\":\"ConfigMap\"",
            "\"name\":\"site-a\"", "\"change\":\"deleted\"")));
    awaitAttachment("site-a", "v1");

    // An attachment no longer asked for is deleted.
    annotate("site", Map.of("attach", "a"));
    awaitGone("site-b");
  }

  /**
   * {@code metareactor.dev/write-child-status} (upstream's #766): the status the answer gives an attachment lands in
   * its status subresource, written as a JSON Patch under dynamic apply and, after the engine is replaced by one
   * with server-side apply, applied to the subresource as the engine's field manager; a status someone else writes
   * into the same subresource beside it is left to them under server-side apply.
   */
  @Test
  void withWriteChildStatusTheStatusOfAnAttachmentLandsInItsSubresourceUnderBothApplyStrategies() {
    targets = ParentCrd.create(cluster, "Board");
    ParentCrd gizmos = ParentCrd.create(cluster, "Gizmo");
    AtomicReference<String> phase = new AtomicReference<>("one");
    try (HookServer server = HookServer.builder().route("/sync", request -> {
      ObjectNode answer = JsonNodeFactory.instance.objectNode();
      ObjectNode gizmo = answer.putArray("attachments").addObject().put("apiVersion", gizmos.apiVersion())
          .put("kind", gizmos.kind());
      gizmo.putObject("metadata").put("name", request.path("object").path("metadata").path("name").asString()
          + "-gizmo");
      gizmo.putObject("spec").put("size", 1);
      gizmo.putObject("status").put("phase", phase.get());
      return answer;
    }).start()) {
      String name = "dc-" + UUID.randomUUID().toString().substring(0, 8);
      engine.createController("""
          apiVersion: metacontroller.k8s.io/v1alpha1
          kind: DecoratorController
          metadata:
            name: %s
            annotations: {metareactor.dev/write-child-status: "true"}
          spec:
            resources:
            - apiVersion: %s
              resource: %s
            attachments:
            - apiVersion: %s
              resource: %s
              updateStrategy:
                method: InPlace
            hooks:
              sync:
                webhook:
                  url: %s
          """.formatted(name, targets.apiVersion(), targets.plural(), gizmos.apiVersion(), gizmos.plural(),
          server.url("/sync")));
      createTarget("board", Map.of(), Map.of());
      await().atMost(TIMEOUT).until(() -> gizmoStatus(gizmos).get("phase"), "one"::equals);

      engine.close();
      engine = engine.successor("--apply-strategy=server-side-apply");
      gizmos.in(client).withName("board-gizmo").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"status\": {\"note\": \"someone else's\"}}");
      phase.set("two");
      annotate("board", Map.of("poke", "1"));
      await().atMost(TIMEOUT).until(() -> gizmoStatus(gizmos).get("phase"), "two"::equals);
      GenericKubernetesResource gizmo = gizmos.in(client).withName("board-gizmo").get();
      assertThat(gizmo.getMetadata().getManagedFields()).anySatisfy(entry -> {
        assertThat(entry.getOperation()).isEqualTo("Apply");
        assertThat(entry.getSubresource()).isEqualTo("status");
      });
      assertThat(gizmoStatus(gizmos)).containsEntry("note", "someone else's");
    }
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> gizmoStatus(ParentCrd gizmos) {
    GenericKubernetesResource gizmo = gizmos.in(client).withName("board-gizmo").get();
    Object status = gizmo == null ? null : gizmo.getAdditionalProperties().get("status");
    return status instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
  }

  @Test
  void severalTargetTypesAreDecoratedAndASteadyStateResyncWritesNothing() {
    targets = ParentCrd.create(cluster, "Alpha");
    ParentCrd beta = ParentCrd.create(cluster, "Beta");
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: dc-two-%s
        spec:
          resyncPeriodSeconds: 1
          resources:
          - apiVersion: %s
            resource: %s
          - apiVersion: %s
            resource: %s
          attachments:
          - apiVersion: v1
            resource: configmaps
            updateStrategy:
              method: InPlace
          hooks:
            sync:
              webhook:
                url: %s
        """.formatted(UUID.randomUUID().toString().substring(0, 6), targets.apiVersion(), targets.plural(),
        beta.apiVersion(), beta.plural(), hooks.url("/sync")));
    List<String> names = new java.util.ArrayList<>();
    for (int i = 0; i < 10; i++) {
      createTarget("alpha-" + i, Map.of("attach", "a", "status", ""), Map.of());
      names.add("alpha-" + i);
      GenericKubernetesResource other = beta.object(cluster.namespace(), "beta-" + i, Map.of());
      other.getMetadata().setAnnotations(Map.of("attach", "a", "status", ""));
      beta.in(client).resource(other).create();
      names.add("beta-" + i);
    }
    // Converged: each status reports the one attachment the hook was shown.
    await().atMost(TIMEOUT).until(() -> names.stream().allMatch(name -> {
      ParentCrd type = name.startsWith("alpha") ? targets : beta;
      Object status = type.in(client).withName(name).get().getAdditionalProperties().get("status");
      return status instanceof Map<?, ?> map && Integer.valueOf(1).equals(map.get("attachments"));
    }));
    // Then a whole round of resyncs makes no API request.
    await().atMost(java.time.Duration.ofMinutes(2)).pollInterval(java.time.Duration.ZERO).until(() -> {
      double before = engine.apiRequests();
      Map<String, Integer> calls = new HashMap<>();
      names.forEach(name -> calls.put(name, hook.calls(name)));
      await().atMost(TIMEOUT).until(() -> names.stream().allMatch(name -> hook.calls(name) >= calls.get(name) + 2));
      return engine.apiRequests() == before;
    });
  }

  @Test
  void resyncAfterSecondsCallsTheHookAgainWithoutAnyChange() {
    targets = ParentCrd.create(cluster, "Poll");
    decorator(hooks.url("/sync"), "", "");
    hook.resyncAfterSeconds = 0.1;
    createTarget("poll", Map.of("decorate", "", "attach", "a"), Map.of());
    awaitAttachment("poll-a", "v1");
    await().atMost(TIMEOUT).until(() -> "yes".equals(target("poll").getMetadata().getLabels().get("decorated")));
    int converged = hook.calls("poll");
    await().atMost(TIMEOUT).until(() -> hook.calls("poll") >= converged + 10);
  }

  @Test
  void v2KeysAttachmentsByNamespaceAndNameAndCustomizeDeliversRelatedObjects() {
    targets = ParentCrd.create(cluster, "Vee");
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("source").endMetadata()
        .addToData("value", "related").build()).create();
    try (HookServer customize = HookServer.builder().route("/customize", request -> JsonNodeFactory.instance
        .objectNode().set("relatedResources", JsonNodeFactory.instance.arrayNode().add(JsonNodeFactory.instance
            .objectNode().put("apiVersion", "v1").put("resource", "configmaps")
            .set("names", JsonNodeFactory.instance.arrayNode().add("source"))))).start()) {
      decorator(hooks.url("/sync"), "    customize:\n      webhook:\n        url: "
          + customize.url("/customize") + "\n", "");
      createTarget("vee", Map.of("decorate", "", "attach", "a"), Map.of());
      awaitAttachment("vee-a", "v1");
      await().atMost(TIMEOUT).until(() -> hook.lastRequest.get("vee").path("related").path("ConfigMap.v1")
          .has("source"));
    }
    ParentCrd v2 = ParentCrd.create(cluster, "Vtwo");
    targets = v2;
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: dc-v2-%s
        spec:
          resources:
          - apiVersion: %s
            resource: %s
          attachments:
          - apiVersion: v1
            resource: configmaps
          hooks:
            sync:
              version: v2
              webhook:
                url: %s
        """.formatted(UUID.randomUUID().toString().substring(0, 6), v2.apiVersion(), v2.plural(),
        hooks.url("/sync")));
    createTarget("two", Map.of("attach", "a"), Map.of());
    awaitAttachment("two-a", "v1");
    await().atMost(TIMEOUT).until(() -> hook.lastRequest.get("two").path("attachments").path("ConfigMap.v1")
        .has(cluster.namespace() + "/two-a"));
  }

  @Test
  void optingOutFinalizesAndOptingBackInRestoresAndDeletionWithAForeignFinalizerFinalizes() {
    targets = ParentCrd.create(cluster, "Opt");
    String decorator = decorator(hooks.url("/sync"), "    finalize:\n      webhook:\n        url: "
        + hooks.url("/sync") + "\n", "");
    String finalizer = "metacontroller.io/decoratorcontroller-" + decorator;
    createTarget("opt", Map.of("decorate", "", "attach", "a,b"), Map.of());
    awaitAttachment("opt-a", "v1");
    awaitAttachment("opt-b", "v1");
    await().atMost(TIMEOUT).until(() -> finalizers("opt").contains(finalizer));

    // Opt out: the selector no longer matches; the finalize hook tears the attachments down, then lets go.
    Map<String, Object> optOut = new HashMap<>();
    optOut.put("decorate", null); // a merge patch's null removes the annotation
    annotate("opt", optOut);
    awaitGone("opt-b");
    awaitGone("opt-a");
    await().atMost(TIMEOUT).until(() -> !finalizers("opt").contains(finalizer));
    assertThat(hook.finalizeCalls.get("opt")).isPositive();

    // Opt back in: finalizer and attachments come back.
    annotate("opt", Map.of("decorate", ""));
    awaitAttachment("opt-a", "v1");
    await().atMost(TIMEOUT).until(() -> finalizers("opt").contains(finalizer));

    // Delete while a foreign finalizer holds the target: finalize runs, our finalizer goes, the foreign one stays.
    targets.in(client).withName("opt").patch(PatchContext.of(PatchType.JSON),
        "[{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":\"example.com/hold\"}]");
    targets.in(client).withName("opt").delete();
    awaitGone("opt-a");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(finalizers("opt")).containsExactly("example.com/hold"));
    targets.in(client).withName("opt").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"finalizers\":null}}");
  }

  /**
   * The sync and finalize hooks in CEL, no webhook: the finalize hook answers no attachments, and finalized once it
   * is shown none; so a deleted target, held by a foreign finalizer, loses its attachments (deleted by the engine,
   * not the garbage collector: the target is still there) and then the engine's finalizer.
   */
  @Test
  void aCelFinalizeHookTearsTheAttachmentsDownThenLetsTheTargetGo() {
    targets = ParentCrd.create(cluster, "Celo");
    String name = decoratorWithHooks("""
            sync:
              cel:
                expression: |
                  {'labels': {'decorated': 'yes'},
                   'attachments': ['a', 'b'].map(s, {'apiVersion': 'v1', 'kind': 'ConfigMap',
                      'metadata': {'name': object.metadata.name + '-' + s}, 'data': {'value': 'v1'}})}
            finalize:
              cel:
                expression: |
                  {'attachments': [],
                   'finalized': !('ConfigMap.v1' in attachments) || attachments['ConfigMap.v1'].size() == 0}
        """, "");
    String finalizer = "metacontroller.io/decoratorcontroller-" + name;
    createTarget("celo", Map.of("decorate", ""), Map.of());
    awaitAttachment("celo-a", "v1");
    awaitAttachment("celo-b", "v1");
    await().atMost(TIMEOUT).until(() -> finalizers("celo").contains(finalizer)
        && "yes".equals(target("celo").getMetadata().getLabels().get("decorated")));

    targets.in(client).withName("celo").patch(PatchContext.of(PatchType.JSON),
        "[{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":\"example.com/hold\"}]");
    targets.in(client).withName("celo").delete();
    awaitGone("celo-a");
    awaitGone("celo-b");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(finalizers("celo")).containsExactly("example.com/hold"));
    assertThat(hook.calls("celo")).as("webhook calls").isZero();
    targets.in(client).withName("celo").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"finalizers\":null}}");
  }

  @Test
  void deletingTheDecoratorRemovesItsFinalizerFromEveryTarget() {
    targets = ParentCrd.create(cluster, "Keep");
    String decorator = decorator(hooks.url("/sync"), "    finalize:\n      webhook:\n        url: "
        + hooks.url("/sync") + "\n", "");
    String finalizer = "metacontroller.io/decoratorcontroller-" + decorator;
    createTarget("one", Map.of("decorate", ""), Map.of());
    createTarget("two", Map.of("decorate", ""), Map.of());
    await().atMost(TIMEOUT).until(() -> finalizers("one").contains(finalizer) && finalizers("two").contains(finalizer));

    engine.deleteController("DecoratorController", decorator);
    await().atMost(TIMEOUT).until(() -> finalizers("one").isEmpty() && finalizers("two").isEmpty());
  }

  @Test
  void malformedAnswersAndFailingHooksGiveWarningEventsAndWriteNothing() {
    targets = ParentCrd.create(cluster, "Bad");
    try (HookServer bad = HookServer.builder().route("/sync", request -> {
      String name = request.path("object").path("metadata").path("name").asString();
      if (name.equals("failing")) {
        throw new IllegalStateException("the hook is down");
      }
      ObjectNode answer = JsonNodeFactory.instance.objectNode();
      answer.putObject("labels").put("decorated", "yes").put("count", 1);
      answer.putObject("status").put("written", true);
      return answer;
    }).start()) {
      decorator(bad.url("/sync"), "", "");
      createTarget("numeric", Map.of("decorate", ""), Map.of());
      createTarget("failing", Map.of("decorate", ""), Map.of());
      await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "numeric", "SyncError",
          "labels.count must be a string or null"));
      await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "failing", "SyncError", "500"));
      assertThat(target("numeric").getMetadata().getLabels()).doesNotContainKey("decorated");
      assertThat(statusOf("numeric")).isEmpty();
    }
  }
}
