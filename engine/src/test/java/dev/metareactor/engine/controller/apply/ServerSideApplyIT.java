package dev.metareactor.engine.controller.apply;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import dev.metareactor.http.metrics.MetricCatalogue;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.Counter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code --apply-strategy=server-side-apply} on the real API server: children of a built-in type (ConfigMap), of a
 * custom resource (Widget) and one the server normalises (a ResourceQuota of {@code cpu: 1000m}, stored as
 * {@code 1}, updated by {@code Recreate}) are created, updated and deleted by applies of the field manager
 * {@code metacontroller}; a hand edit of an owned field is applied back though no generation moved, another
 * manager's field is kept, and a converged controller makes no request; and a cluster switched from dynamic apply to
 * server-side apply and back writes nothing while converged and hands its fields over when a child changes.
 */
@LocalKubernetes
class ServerSideApplyIT {

  private static final String SSA = "--apply-strategy=server-side-apply";
  private static final String MANAGER = "metacontroller";
  private static final String LAST_APPLIED = "metacontroller.k8s.io/last-applied-configuration";
  private static final Set<String> CHILD_RESOURCES = Set.of("configmaps", "resourcequotas");

  private LocalCluster cluster;
  private KubernetesClient client;
  private final SiteHook hook = new SiteHook();
  private HookServer hooks;
  private EngineUnderTest engine;
  private ParentCrd sites;
  private ParentCrd widgets;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.hooks = HookServer.builder().route("/sync", hook).start();
    this.sites = ParentCrd.create(cluster, "Site");
    this.widgets = ParentCrd.named("Widget").withoutStatusSubresource().createIn(cluster);
  }

  @AfterEach
  void stop() {
    if (engine != null) {
      engine.close();
    }
    hooks.close();
  }

  @Test
  void childrenAreAppliedDriftIsUndoneAndAConvergedControllerMakesNoRequest() {
    engine = EngineUnderTest.start(cluster, SSA);
    controller();
    Map<String, Object> spec = spec(List.of("a"), "v1", true);
    spec.put("quota", true);
    String parentUid = sites.in(client).resource(sites.object(cluster.namespace(), "site", spec)).create()
        .getMetadata().getUid();

    ConfigMap a = awaitConfigMap("site-a", data -> "v1".equals(data.get("value")) && "x".equals(data.get("extra")));
    assertThat(a.getMetadata().getAnnotations()).as("no last-applied annotation under server-side apply")
        .doesNotContainKey(LAST_APPLIED);
    assertThat(a.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(ref -> assertThat(ref.getUid()).isEqualTo(parentUid))
        .satisfies(ref -> assertThat(ref.getController()).isTrue());
    assertThat(applied(a)).as("the Apply entry of the manager").contains("f:value").contains("f:extra");
    GenericKubernetesResource widget = awaitWidget("site-a", "v1");
    assertThat(widget.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(applied(widget)).contains("\"f:value\"");
    ResourceQuota quota = await().atMost(TIMEOUT).until(() -> client.resourceQuotas().withName("site-quota").get(),
        java.util.Objects::nonNull);
    assertThat(quota.getSpec().getHard().get("cpu").toString()).as("stored as the server normalises it")
        .isEqualTo("1");

    assertNoChildRequestsWhileSyncing("site");

    // Drift: an owned field changed by hand (no generation moves) comes back; a field of another manager stays.
    kubectlPatch("configmap", "site-a", "{\"data\":{\"value\":\"edited\",\"mine\":\"kept\"}}");
    kubectlPatch(widgets.plural() + "." + widgets.group(), "site-a", "{\"metadata\":{\"labels\":{\"app\":\"no\"}}}");
    awaitConfigMap("site-a", data -> "v1".equals(data.get("value")) && "kept".equals(data.get("mine")));
    await().atMost(TIMEOUT).until(() -> "site".equals(widget("site-a").getMetadata().getLabels().get("app")));

    // An update: a changed value, a field dropped (removed), a child added and, later, one dropped (deleted).
    setSpec("site", List.of("a", "b"), "v2", false);
    ConfigMap updated = awaitConfigMap("site-a", data -> "v2".equals(data.get("value")) && !data.containsKey("extra"));
    assertThat(updated.getMetadata().getUid()).as("updated in place").isEqualTo(a.getMetadata().getUid());
    assertThat(updated.getData()).containsEntry("mine", "kept");
    assertThat(awaitWidget("site-a", "v2").getMetadata().getUid()).isEqualTo(widget.getMetadata().getUid());
    awaitConfigMap("site-b", data -> "v2".equals(data.get("value")));
    awaitWidget("site-b", "v2");
    setSpec("site", List.of("b"), "v2", false);
    await().atMost(TIMEOUT).until(() -> client.configMaps().withName("site-a").get() == null
        && widgets.in(client).withName("site-a").get() == null);

    assertThat(client.resourceQuotas().withName("site-quota").get().getMetadata().getUid())
        .as("Recreate: the normalised quota was never deleted (a dry run said it would not change)")
        .isEqualTo(quota.getMetadata().getUid());
    assertNoChildRequestsWhileSyncing("site");
  }

  @Test
  void switchingFromDynamicApplyAndBackWritesNothingWhileConvergedAndHandsFieldsOver() {
    engine = EngineUnderTest.start(cluster);
    controller();
    createParent("mig", List.of("a"), "v1", true);
    ConfigMap dynamic = awaitConfigMap("mig-a", data -> "x".equals(data.get("extra")));
    assertThat(dynamic.getMetadata().getAnnotations()).containsKey(LAST_APPLIED);
    kubectlPatch("configmap", "mig-a", "{\"data\":{\"mine\":\"kept\"}}");
    awaitConfigMap("mig-a", data -> "kept".equals(data.get("mine")));

    // To server-side apply: a converged child is left as it is, annotation and all.
    engine.close();
    engine = engine.successor(SSA);
    assertNoChildRequestsSinceStart("mig");
    assertThat(client.configMaps().withName("mig-a").get().getMetadata().getAnnotations())
        .containsKey(LAST_APPLIED);

    // Its first change hands it over: what dynamic apply applied is the manager's now, so a dropped field goes.
    setSpec("mig", List.of("a"), "v2", false);
    ConfigMap handedOver = awaitConfigMap("mig-a", data -> "v2".equals(data.get("value"))
        && !data.containsKey("extra"));
    assertThat(handedOver.getMetadata().getUid()).isEqualTo(dynamic.getMetadata().getUid());
    assertThat(handedOver.getData()).containsEntry("mine", "kept");
    assertThat(handedOver.getMetadata().getAnnotations()).doesNotContainKey(LAST_APPLIED);
    assertThat(applied(handedOver)).contains("f:value");
    assertThat(handedOver.getMetadata().getManagedFields())
        .as("no Update entry of a dynamic-apply writer owns the data any more")
        .filteredOn(entry -> "Update".equals(entry.getOperation()) && !"status".equals(entry.getSubresource())
            && Set.of(MANAGER, "metareactor").contains(entry.getManager()))
        .allSatisfy(entry -> assertThat(fields(entry)).doesNotContain("f:value"));

    // Back to dynamic apply: converged children are judged by what the manager applied, so nothing is written...
    engine.close();
    engine = engine.successor();
    assertNoChildRequestsSinceStart("mig");
    assertThat(client.configMaps().withName("mig-a").get().getMetadata().getAnnotations())
        .doesNotContainKey(LAST_APPLIED);
    // ...and a change merges against it and records the annotation; a field dropped later is removed.
    setSpec("mig", List.of("a"), "v3", true);
    ConfigMap back = awaitConfigMap("mig-a", data -> "v3".equals(data.get("value")) && "x".equals(data.get("extra")));
    assertThat(back.getMetadata().getAnnotations()).containsKey(LAST_APPLIED);
    setSpec("mig", List.of("a"), "v4", false);
    ConfigMap pruned = awaitConfigMap("mig-a", data -> "v4".equals(data.get("value")) && !data.containsKey("extra"));
    assertThat(pruned.getData()).containsEntry("mine", "kept");
    assertThat(pruned.getMetadata().getUid()).isEqualTo(dynamic.getMetadata().getUid());
  }

  // ---- the controller, its parents and children

  private void controller() {
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: ssa-%s
        spec:
          generateSelector: true
          resyncPeriodSeconds: 1
          parentResource:
            apiVersion: %s
            resource: %s
          childResources:
          - apiVersion: v1
            resource: configmaps
            updateStrategy: {method: InPlace}
          - apiVersion: %s
            resource: %s
            updateStrategy: {method: InPlace}
          - apiVersion: v1
            resource: resourcequotas
            updateStrategy: {method: Recreate}
          hooks:
            sync:
              webhook:
                url: %s
        """.formatted(UUID.randomUUID().toString().substring(0, 8), sites.apiVersion(), sites.plural(),
        widgets.apiVersion(), widgets.plural(), hooks.url("/sync")));
  }

  private GenericKubernetesResource createParent(String name, List<String> names, String value, boolean extra) {
    return sites.in(client).resource(sites.object(cluster.namespace(), name, spec(names, value, extra))).create();
  }

  /** Sets the spec's names, value and extra (and no other field) with a JSON merge patch. */
  private void setSpec(String parent, List<String> names, String value, boolean extra) {
    sites.in(client).withName(parent).patch(PatchContext.of(PatchType.JSON_MERGE),
        client.getKubernetesSerialization().asJson(Map.of("spec", spec(names, value, extra))));
  }

  private static Map<String, Object> spec(List<String> names, String value, boolean extra) {
    Map<String, Object> spec = new HashMap<>();
    spec.put("names", names);
    spec.put("value", value);
    spec.put("extra", extra);
    return spec;
  }

  private ConfigMap awaitConfigMap(String name, Predicate<Map<String, String>> data) {
    return await().atMost(TIMEOUT).until(() -> client.configMaps().withName(name).get(),
        cm -> cm != null && cm.getData() != null && data.test(cm.getData()));
  }

  private GenericKubernetesResource widget(String name) {
    return widgets.in(client).withName(name).get();
  }

  private GenericKubernetesResource awaitWidget(String name, String value) {
    return await().atMost(TIMEOUT).until(() -> widget(name),
        widget -> widget != null && value.equals(((Map<?, ?>) widget.getAdditionalProperties().get("spec"))
            .get("value")));
  }

  private void kubectlPatch(String resource, String name, String patch) {
    cluster.kubectl("-n", cluster.namespace(), "patch", resource, name, "--type=merge", "-p", patch).orThrow();
  }

  /** The fieldsV1 of the manager's Apply entry, as JSON text. */
  private String applied(HasMetadata object) {
    return object.getMetadata().getManagedFields().stream()
        .filter(entry -> MANAGER.equals(entry.getManager()) && "Apply".equals(entry.getOperation()))
        .map(this::fields).findFirst().orElseThrow(() -> new AssertionError("no Apply entry of " + MANAGER
            + " in " + object.getMetadata().getManagedFields()));
  }

  private String fields(ManagedFieldsEntry entry) {
    return client.getKubernetesSerialization().asJson(entry.getFieldsV1());
  }

  /**
   * While the parent is synced three more times (every second, by its resync period), the engine sends no request
   * about any child.
   */
  private void assertNoChildRequestsWhileSyncing(String parent) {
    awaitSyncs(parent, 2);
    double before = childRequests();
    awaitSyncs(parent, 3);
    assertThat(childRequests() - before).as("requests about children while converged: %s", childCounters())
        .isZero();
  }

  /** An engine that just started syncs the parent three times and sends no request about any child. */
  private void assertNoChildRequestsSinceStart(String parent) {
    awaitSyncs(parent, 3);
    assertThat(childRequests()).as("requests about children since the engine started: %s", childCounters())
        .isZero();
  }

  private void awaitSyncs(String parent, int syncs) {
    int calls = hook.calls(parent);
    await().atMost(TIMEOUT).until(() -> hook.calls(parent) >= calls + syncs);
  }

  private double childRequests() {
    return engine.apiRequests(this::aboutChildren);
  }

  private boolean aboutChildren(Counter counter) {
    String resource = counter.getId().getTag("resource");
    return CHILD_RESOURCES.contains(resource) || (widgets.plural() + "." + widgets.group()).equals(resource);
  }

  private String childCounters() {
    return engine.engine().meters().find(MetricCatalogue.API_REQUESTS.name()).counters().stream()
        .filter(this::aboutChildren)
        .map(counter -> counter.getId().getTag("verb") + " " + counter.getId().getTag("resource") + " "
            + counter.getId().getTag("code") + ": " + counter.count())
        .toList().toString();
  }

  /**
   * The sync hook: for each of the parent's {@code spec.names}, a ConfigMap {@code <parent>-<name>} with
   * {@code data.value} (and {@code data.extra} while {@code spec.extra}) and a Widget with {@code spec.value}, both
   * labelled {@code app: <parent>}; and while {@code spec.quota}, a ResourceQuota {@code <parent>-quota} of
   * {@code cpu: 1000m}.
   */
  private final class SiteHook implements Function<JsonNode, JsonNode> {

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    @Override
    public JsonNode apply(JsonNode request) {
      JsonNode parent = request.path("parent");
      String name = parent.path("metadata").path("name").asString();
      calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
      JsonNode spec = parent.path("spec");
      ObjectNode response = JsonNodeFactory.instance.objectNode();
      ArrayNode children = response.putArray("children");
      for (JsonNode suffix : spec.path("names")) {
        String child = name + "-" + suffix.asString();
        ObjectNode configMap = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
        configMap.putObject("metadata").put("name", child).putObject("labels").put("app", name);
        ObjectNode data = configMap.putObject("data").put("value", spec.path("value").asString());
        if (spec.path("extra").asBoolean(false)) {
          data.put("extra", "x");
        }
        ObjectNode widget = children.addObject().put("apiVersion", widgets.apiVersion()).put("kind", widgets.kind());
        widget.putObject("metadata").put("name", child).putObject("labels").put("app", name);
        widget.putObject("spec").put("value", spec.path("value").asString());
      }
      if (spec.path("quota").asBoolean(false)) {
        ObjectNode quota = children.addObject().put("apiVersion", "v1").put("kind", "ResourceQuota");
        quota.putObject("metadata").put("name", name + "-quota");
        quota.putObject("spec").putObject("hard").put("cpu", "1000m");
      }
      response.putObject("status").put("children", children.size());
      return response;
    }

    int calls(String parent) {
      AtomicInteger count = calls.get(parent);
      return count == null ? 0 : count.get();
    }
  }
}
