package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What the CompositeController ITs share: an engine in this JVM, the {@link ConfigMapHook} served by a
 * {@link HookServer} at {@code /sync}, a parent CRD per test, and helpers to create controllers and parents and to
 * wait for children.
 */
@LocalKubernetes
abstract class CompositeTestBase {

  protected LocalCluster cluster;
  protected KubernetesClient client;
  protected EngineUnderTest engine;
  protected ConfigMapHook hook;
  protected HookServer hooks;
  protected ParentCrd parents;

  @BeforeEach
  void startEngineAndHook(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.hook = new ConfigMapHook();
    this.hooks = HookServer.builder().route("/sync", hook).start();
    this.engine = EngineUnderTest.start(cluster);
  }

  @AfterEach
  void stopEngineAndHook() {
    engine.close();
    hooks.close();
  }

  /**
   * Creates a CompositeController with {@code generateSelector: true}, ConfigMap children updated by
   * {@code method}, and the test hook as its sync hook; returns its name.
   */
  protected String controller(ParentCrd parentCrd, String method, String extraSpec) {
    String name = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController(controllerYaml(name, parentCrd, method, hooks.url("/sync"), extraSpec));
    return name;
  }

  /**
   * The YAML of such a controller. {@code extraSpec} lines are appended inside {@code spec} (indent them by two
   * spaces); {@code generateSelector: true} can be dropped by the caller with {@code replace}.
   */
  protected static String controllerYaml(String name, ParentCrd parentCrd, String method, String url,
      String extraSpec) {
    return """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %s
        spec:
          generateSelector: true
          parentResource:
            apiVersion: %s
            resource: %s
          childResources:
          - apiVersion: v1
            resource: configmaps
            updateStrategy:
              method: %s
          hooks:
            sync:
              webhook:
                url: %s
        """.formatted(name, parentCrd.apiVersion(), parentCrd.plural(), method, url) + extraSpec;
  }

  protected GenericKubernetesResource createParent(String name, List<String> childNames, String value) {
    return createParent(name, spec(childNames, value));
  }

  protected GenericKubernetesResource createParent(String name, Map<String, Object> spec) {
    return parents.in(client).resource(parents.object(cluster.namespace(), name, spec)).create();
  }

  protected static Map<String, Object> spec(List<String> childNames, String value) {
    Map<String, Object> spec = new HashMap<>();
    spec.put("names", childNames);
    spec.put("value", value);
    return spec;
  }

  /**
   * Replaces a parent's spec with a JSON merge patch and no resourceVersion, as {@code kubectl patch} does: the
   * engine writes the parent's status meanwhile, and an optimistic edit would conflict with it.
   */
  protected void setSpec(String parent, List<String> childNames, String value) {
    patchParent(parent, Map.of("spec", spec(childNames, value)));
  }

  /** A JSON merge patch of a parent, without resourceVersion. */
  protected void patchParent(String parent, Map<String, Object> patch) {
    parents.in(client).withName(parent).patch(PatchContext.of(PatchType.JSON_MERGE),
        client.getKubernetesSerialization().asJson(patch));
  }

  /** A new namespace, deleted after the test. */
  protected String extraNamespace() {
    String name = "it-extra-" + UUID.randomUUID().toString().substring(0, 8);
    cluster.deleteAfterTest(client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name)
        .endMetadata().build()).create());
    return name;
  }

  protected ConfigMap awaitChild(String name, String value) {
    return await().atMost(TIMEOUT).until(() -> client.configMaps().withName(name).get(),
        cm -> cm != null && value.equals(cm.getData().get("value")));
  }

  protected void awaitGone(String configMap) {
    await().atMost(TIMEOUT).until(() -> client.configMaps().withName(configMap).get() == null);
  }

  protected Map<String, Object> status(String parent) {
    return statusOf(parents.in(client).withName(parent).get());
  }

  @SuppressWarnings("unchecked")
  protected static Map<String, Object> statusOf(GenericKubernetesResource parent) {
    Object status = parent == null ? null : parent.getAdditionalProperties().get("status");
    return status instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
  }

  /** Whether a SyncError Warning whose message contains {@code text} was recorded on the parent. */
  protected boolean hasSyncError(String parent, String text) {
    return engine.hasEvent(parents.namespaced() ? cluster.namespace() : "default", parent, "SyncError", text);
  }

  /** The request with the parent's {@code spec.value} replaced, so a hook answers with another value. */
  protected static JsonNode withValue(JsonNode request, String value) {
    ObjectNode copy = (ObjectNode) request.deepCopy();
    ((ObjectNode) copy.path("parent").path("spec")).put("value", value);
    return copy;
  }

  /** The parent's kept syncs, as the engine serves them on its metrics address ({@code /debug/syncs}). */
  protected List<JsonNode> keptSyncs(String controller, String parent) {
    return engine.keptSyncs("compositecontroller", controller, cluster.namespace(), parent);
  }

  /** Waits until a kept sync of {@code parent} was caused by {@code cause} and returns it. */
  protected JsonNode awaitSyncFor(String controller, String parent, String cause) {
    return await().atMost(TIMEOUT).until(() -> keptSyncs(controller, parent).stream()
            .filter(sync -> sync.path("causes").findValuesAsString("cause").contains(cause)).findFirst(),
        Optional::isPresent).orElseThrow();
  }
}
