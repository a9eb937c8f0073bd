package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** kube-controller-manager's garbage collector deletes dependents of deleted owners. */
@LocalKubernetes
class GarbageCollectionIT {

  /** The GC re-reads discovery every 30 s, so a CRD created after it started can take that long to be watched. */
  private static final Duration GC_TIMEOUT = Duration.ofSeconds(90);

  @Test
  void backgroundDeletionOfABuiltInOwnerDeletesItsDependents(KubernetesClient client) {
    ConfigMap owner = client.configMaps().resource(configMap("owner", null)).create();
    client.configMaps().resource(configMap("dependent", ownerRef(owner, true))).create();
    client.configMaps().resource(configMap("bystander", null)).create();

    client.configMaps().withName("owner").withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();

    await().atMost(GC_TIMEOUT).pollInterval(Duration.ofMillis(250))
        .until(() -> client.configMaps().withName("dependent").get() == null);
    assertThat(client.configMaps().withName("owner").get()).isNull();
    assertThat(client.configMaps().withName("bystander").get()).isNotNull();
  }

  @Test
  void foregroundDeletionDeletesDependentsBeforeTheOwner(KubernetesClient client) {
    ConfigMap owner = client.configMaps().resource(configMap("owner", null)).create();
    client.configMaps().resource(configMap("dependent", ownerRef(owner, true))).create();

    client.configMaps().withName("owner").withPropagationPolicy(DeletionPropagation.FOREGROUND).delete();

    // The owner waits, with the foregroundDeletion finalizer, until the GC has deleted the dependent.
    ConfigMap waiting = client.configMaps().withName("owner").get();
    if (waiting != null) {
      assertThat(waiting.getMetadata().getDeletionTimestamp()).isNotBlank();
      assertThat(waiting.getMetadata().getFinalizers()).contains("foregroundDeletion");
    }
    await().atMost(GC_TIMEOUT).pollInterval(Duration.ofMillis(250))
        .until(() -> client.configMaps().withName("owner").get() == null);
    assertThat(client.configMaps().withName("dependent").get()).isNull();
  }

  @Test
  void orphanDeletionKeepsDependentsAndDropsTheirOwnerReference(KubernetesClient client) {
    ConfigMap owner = client.configMaps().resource(configMap("owner", null)).create();
    client.configMaps().resource(configMap("dependent", ownerRef(owner, false))).create();

    client.configMaps().withName("owner").withPropagationPolicy(DeletionPropagation.ORPHAN).delete();

    await().atMost(GC_TIMEOUT).pollInterval(Duration.ofMillis(250))
        .until(() -> client.configMaps().withName("owner").get() == null);
    ConfigMap dependent = client.configMaps().withName("dependent").get();
    assertThat(dependent).isNotNull();
    assertThat(dependent.getMetadata().getOwnerReferences()).isNullOrEmpty();
  }

  @Test
  void backgroundDeletionOfACustomResourceOwnerDeletesItsDependents(LocalCluster cluster) {
    KubernetesClient client = cluster.client();
    Widgets widgets = Widgets.unique();
    cluster.createCrd(widgets.crd(client));

    GenericKubernetesResource owner = widgets.in(client).resource(widgets.widget("owner", 1)).create();
    client.configMaps().resource(configMap("dependent", ownerRef(owner, true))).create();
    GenericKubernetesResource dependentWidget = widgets.widget("dependent-widget", 2);
    dependentWidget.getMetadata().setOwnerReferences(java.util.List.of(ownerRef(owner, false)));
    widgets.in(client).resource(dependentWidget).create();
    client.configMaps().resource(configMap("bystander", null)).create();

    widgets.in(client).withName("owner").withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();

    await().atMost(GC_TIMEOUT).pollInterval(Duration.ofMillis(500))
        .until(() -> client.configMaps().withName("dependent").get() == null
            && widgets.in(client).withName("dependent-widget").get() == null);
    assertThat(widgets.in(client).withName("owner").get()).isNull();
    assertThat(client.configMaps().withName("bystander").get()).isNotNull();
  }

  @Test
  void aClusterScopedOwnersNamespacedDependentsAreDeletedWithIt(KubernetesClient client) {
    // The shape DecoratorController attachments take when a ClusterRole is decorated with a RoleBinding.
    String name = "gc-owner-" + UUID.randomUUID().toString().substring(0, 8);
    ClusterRole owner = client.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata()
        .withName(name).endMetadata().build()).create();
    client.rbac().roleBindings().resource(new RoleBindingBuilder().withNewMetadata().withName(name)
        .addToOwnerReferences(ownerRef(owner, true)).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", name).build()).create();

    client.rbac().clusterRoles().withName(name).withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();

    await().atMost(GC_TIMEOUT).pollInterval(Duration.ofMillis(250))
        .until(() -> client.rbac().roleBindings().withName(name).get() == null);
    assertThat(client.rbac().clusterRoles().withName(name).get()).isNull();
  }

  private static ConfigMap configMap(String name, OwnerReference owner) {
    ConfigMapBuilder b = new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().addToData("k", name);
    if (owner != null) {
      b.editMetadata().addToOwnerReferences(owner).endMetadata();
    }
    return b.build();
  }

  private static OwnerReference ownerRef(HasMetadata owner, boolean controller) {
    return new OwnerReferenceBuilder()
        .withApiVersion(owner.getApiVersion())
        .withKind(owner.getKind())
        .withName(owner.getMetadata().getName())
        .withUid(owner.getMetadata().getUid())
        .withController(controller)
        .withBlockOwnerDeletion(true)
        .build();
  }
}
