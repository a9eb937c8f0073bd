package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Upstream's decorator examples, with hooks written here: service-per-pod (a Service per Pod of a StatefulSet
 * selected by annotations, a {@code pod-name} label on Pods, opt-out and opt-in, deletion held by a foreign
 * finalizer) and a ClusterRole decorated with a namespaced RoleBinding (re-created when deleted by hand, owned by
 * the ClusterRole). Each under both apply strategies: the attachments are dynamically or server-side applied.
 */
@LocalKubernetes
class DecoratorExamplesIT {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private LocalCluster cluster;
  private KubernetesClient client;
  private EngineUnderTest engine;
  private HookServer hooks;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.hooks = HookServer.builder()
        .route("/service-per-pod", DecoratorExamplesIT::servicePerPod)
        .route("/pod-name-label", request -> {
          ObjectNode answer = NODES.objectNode();
          answer.putObject("labels").put("pod-name", request.path("object").path("metadata").path("name").asString());
          return answer;
        })
        .route("/default-binding", DecoratorExamplesIT::defaultBinding)
        .start();
  }

  @AfterEach
  void stop() {
    if (engine != null) {
      engine.close();
    }
    hooks.close();
  }

  private void startEngine(ApplyStrategy strategy) {
    engine = EngineUnderTest.start(cluster, "--apply-strategy=" + strategy.flagValue());
  }

  /** A Service per replica, selecting the Pod by the label the StatefulSet's annotation names; none when finalizing. */
  private static JsonNode servicePerPod(JsonNode request) {
    JsonNode set = request.path("object");
    ObjectNode answer = NODES.objectNode();
    ArrayNode attachments = answer.putArray("attachments");
    if (request.path("finalizing").booleanValue()) {
      answer.put("finalized", request.path("attachments").path("Service.v1").isEmpty());
      return answer;
    }
    String name = set.path("metadata").path("name").asString();
    String labelKey = set.path("metadata").path("annotations").path("service-per-pod-label").asString();
    String[] ports = set.path("metadata").path("annotations").path("service-per-pod-ports").asString().split(":");
    for (int i = 0; i < set.path("spec").path("replicas").asInt(); i++) {
      ObjectNode service = attachments.addObject().put("apiVersion", "v1").put("kind", "Service");
      service.putObject("metadata").put("name", name + "-" + i);
      ObjectNode spec = service.putObject("spec");
      spec.putObject("selector").put(labelKey, name + "-" + i);
      spec.putArray("ports").addObject().put("port", Integer.parseInt(ports[0]))
          .put("targetPort", Integer.parseInt(ports[1]));
    }
    return answer;
  }

  /** A RoleBinding of the ClusterRole to the default ServiceAccount of the namespace its annotation names. */
  private static JsonNode defaultBinding(JsonNode request) {
    JsonNode role = request.path("object");
    String name = role.path("metadata").path("name").asString();
    String namespace = role.path("metadata").path("annotations").path("default-service-account-binding").asString();
    ObjectNode answer = NODES.objectNode();
    ObjectNode binding = answer.putArray("attachments").addObject()
        .put("apiVersion", "rbac.authorization.k8s.io/v1").put("kind", "RoleBinding");
    binding.putObject("metadata").put("name", name).put("namespace", namespace);
    binding.putObject("roleRef").put("apiGroup", "rbac.authorization.k8s.io").put("kind", "ClusterRole")
        .put("name", name);
    binding.putArray("subjects").addObject().put("kind", "ServiceAccount").put("name", "default")
        .put("namespace", namespace);
    return answer;
  }

  /** Creates a DecoratorController from YAML whose {@code metadata.name} is {@code NAME}; returns its name. */
  private String decorator(String yaml) {
    String name = "dc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController(yaml.replace("name: NAME", "name: " + name));
    return name;
  }

  private List<String> finalizersOf(String statefulSet) {
    StatefulSet set = client.apps().statefulSets().withName(statefulSet).get();
    return set == null || set.getMetadata().getFinalizers() == null ? List.of() : set.getMetadata().getFinalizers();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(ApplyStrategy.class)
  void servicePerPod(ApplyStrategy strategy) {
    startEngine(strategy);
    String services = decorator("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: NAME
        spec:
          resources:
          - apiVersion: apps/v1
            resource: statefulsets
            annotationSelector:
              matchExpressions:
              - {key: service-per-pod-label, operator: Exists}
              - {key: service-per-pod-ports, operator: Exists}
          attachments:
          - apiVersion: v1
            resource: services
          hooks:
            sync:
              webhook:
                url: SERVICES
            finalize:
              webhook:
                url: SERVICES
        """.replace("SERVICES", hooks.url("/service-per-pod")));
    decorator("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: NAME
        spec:
          resources:
          - apiVersion: v1
            resource: pods
            labelSelector:
              matchExpressions:
              - {key: pod-name, operator: DoesNotExist}
            annotationSelector:
              matchExpressions:
              - {key: pod-name-label, operator: Exists}
          hooks:
            sync:
              webhook:
                url: PODS
        """.replace("PODS", hooks.url("/pod-name-label")));
    client.apps().statefulSets().resource(new StatefulSetBuilder()
        .withNewMetadata().withName("nginx")
        .addToAnnotations("service-per-pod-label", "pod-name").addToAnnotations("service-per-pod-ports", "80:8080")
        .endMetadata()
        .withNewSpec().withReplicas(3).withServiceName("nginx")
        .withNewSelector().addToMatchLabels("app", "nginx").endSelector()
        .withNewTemplate().withNewMetadata().addToLabels("app", "nginx").endMetadata()
        .withNewSpec().addNewContainer().withName("nginx").withImage("nginx").endContainer().endSpec().endTemplate()
        .endSpec().build()).create();
    // No StatefulSet controller runs here: make its Pods as it would.
    for (int i = 0; i < 3; i++) {
      client.pods().resource(new PodBuilder().withNewMetadata().withName("nginx-" + i).addToLabels("app", "nginx")
          .addToAnnotations("pod-name-label", "true").endMetadata()
          .withNewSpec().addNewContainer().withName("nginx").withImage("nginx").endContainer().endSpec().build())
          .create();
    }

    Service service = await().atMost(TIMEOUT).until(() -> client.services().withName("nginx-2").get(),
        found -> found != null);
    assertThat(service.getSpec().getSelector()).containsEntry("pod-name", "nginx-2");
    await().atMost(TIMEOUT).until(() -> "nginx-2".equals(
        client.pods().withName("nginx-2").get().getMetadata().getLabels().get("pod-name")));
    String finalizer = "metacontroller.io/decoratorcontroller-" + services;
    await().atMost(TIMEOUT).until(() -> finalizersOf("nginx").contains(finalizer));

    // Opt out by removing an annotation the selector requires: finalized, Services gone, finalizer removed.
    client.apps().statefulSets().withName("nginx").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"annotations\":{\"service-per-pod-label\":null}}}");
    await().atMost(TIMEOUT).until(() -> client.services().withName("nginx-0").get() == null
        && client.services().withName("nginx-2").get() == null);
    await().atMost(TIMEOUT).until(() -> !finalizersOf("nginx").contains(finalizer));

    // Opt back in.
    client.apps().statefulSets().withName("nginx").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"annotations\":{\"service-per-pod-label\":\"pod-name\"}}}");
    await().atMost(TIMEOUT).until(() -> client.services().withName("nginx-2").get() != null);
    await().atMost(TIMEOUT).until(() -> finalizersOf("nginx").contains(finalizer));

    // Delete while a foreign finalizer holds it: the finalize hook runs and only our finalizer goes.
    client.apps().statefulSets().withName("nginx").patch(PatchContext.of(PatchType.JSON),
        "[{\"op\":\"add\",\"path\":\"/metadata/finalizers/-\",\"value\":\"example.com/hold\"}]");
    client.apps().statefulSets().withName("nginx").delete();
    await().atMost(TIMEOUT).until(() -> client.services().withName("nginx-1").get() == null);
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(finalizersOf("nginx")).containsExactly("example.com/hold"));
    client.apps().statefulSets().withName("nginx").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"finalizers\":null}}");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(ApplyStrategy.class)
  void aClusterRoleDecoratedWithANamespacedRoleBinding(ApplyStrategy strategy) {
    startEngine(strategy);
    decorator("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: NAME
        spec:
          resources:
          - apiVersion: rbac.authorization.k8s.io/v1
            resource: clusterroles
            annotationSelector:
              matchExpressions:
              - {key: default-service-account-binding, operator: Exists}
          attachments:
          - apiVersion: rbac.authorization.k8s.io/v1
            resource: rolebindings
          hooks:
            sync:
              webhook:
                url: BINDING
        """.replace("BINDING", hooks.url("/default-binding")));
    String role = "it-reader-" + UUID.randomUUID().toString().substring(0, 6);
    ClusterRole clusterRole = client.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata()
        .withName(role).addToAnnotations("default-service-account-binding", cluster.namespace()).endMetadata()
        .addNewRule().withApiGroups("").withResources("configmaps").withVerbs("get").endRule().build()).create();
    cluster.deleteAfterTest(clusterRole);

    RoleBinding binding = await().atMost(TIMEOUT).until(() -> client.rbac().roleBindings().withName(role).get(),
        found -> found != null);
    // The reference kube-controller-manager's garbage collector follows when the ClusterRole goes (a cluster-scoped
    // owner of a namespaced dependent: GarbageCollectionIT shows the collector honours exactly this shape; waiting
    // for it here measured the collector's backlog after the fault suites, up to minutes on two cores).
    assertThat(binding.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
      assertThat(ref.getApiVersion()).isEqualTo("rbac.authorization.k8s.io/v1");
      assertThat(ref.getKind()).isEqualTo("ClusterRole");
      assertThat(ref.getName()).isEqualTo(role);
      assertThat(ref.getUid()).isEqualTo(clusterRole.getMetadata().getUid());
      assertThat(ref.getController()).isTrue();
      assertThat(ref.getBlockOwnerDeletion()).isTrue();
    });

    client.rbac().roleBindings().withName(role).delete();
    await().atMost(TIMEOUT).until(() -> {
      RoleBinding again = client.rbac().roleBindings().withName(role).get();
      return again != null && !again.getMetadata().getUid().equals(binding.getMetadata().getUid());
    });
  }
}
