package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Create, update, the three patch flavours and optimistic concurrency against the real apiserver. */
@LocalKubernetes
class WriteSemanticsIT {

  KubernetesClient client; // field injection

  @Test
  void createAndUpdateBumpResourceVersion() {
    ConfigMap created = client.configMaps().resource(configMap("cm", Map.of("a", "1"))).create();
    assertThat(created.getMetadata().getUid()).isNotBlank();
    assertThat(created.getMetadata().getResourceVersion()).isNotBlank();

    created.getData().put("b", "2");
    ConfigMap updated = client.configMaps().resource(created).update();
    assertThat(updated.getData()).containsExactlyInAnyOrderEntriesOf(Map.of("a", "1", "b", "2"));
    assertThat(updated.getMetadata().getResourceVersion()).isNotEqualTo(created.getMetadata().getResourceVersion());
    assertThat(client.configMaps().withName("cm").get().getData()).containsEntry("b", "2");
  }

  @Test
  void updateWithStaleResourceVersionIsAConflict() {
    ConfigMap v1 = client.configMaps().resource(configMap("cm", Map.of("a", "1"))).create();
    ConfigMap v2 = client.configMaps().withName("cm").edit(cm -> {
      cm.getData().put("a", "2");
      return cm;
    });
    assertThat(v2.getMetadata().getResourceVersion()).isNotEqualTo(v1.getMetadata().getResourceVersion());

    v1.getData().put("a", "stale");
    assertThatThrownBy(() -> client.configMaps().resource(v1).update())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(client.configMaps().withName("cm").get().getData()).containsEntry("a", "2");

    // The same object with the current resourceVersion goes through.
    v1.getMetadata().setResourceVersion(v2.getMetadata().getResourceVersion());
    assertThat(client.configMaps().resource(v1).update().getData()).containsEntry("a", "stale");
  }

  @Test
  void jsonMergePatchSetsAndRemovesKeys() {
    client.configMaps().resource(configMap("cm", Map.of("keep", "1", "drop", "2"))).create();
    ConfigMap patched = client.configMaps().withName("cm").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"labels\":{\"patched\":\"yes\"}},\"data\":{\"drop\":null,\"new\":\"3\"}}");
    assertThat(patched.getData()).containsExactlyInAnyOrderEntriesOf(Map.of("keep", "1", "new", "3"));
    assertThat(patched.getMetadata().getLabels()).containsEntry("patched", "yes");
  }

  @Test
  void strategicMergePatchMergesContainersByName() {
    client.apps().deployments().resource(deployment()).create();

    // Under a strategic merge patch the containers list is merged by name: "sidecar" is kept.
    String patch = "{\"spec\":{\"template\":{\"spec\":{\"containers\":"
        + "[{\"name\":\"main\",\"image\":\"example.invalid/main:2\"}]}}}}";
    Deployment smp = client.apps().deployments().withName("d").patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
        patch);
    assertThat(smp.getSpec().getTemplate().getSpec().getContainers())
        .extracting(Container::getName, Container::getImage)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("main", "example.invalid/main:2"),
            org.assertj.core.groups.Tuple.tuple("sidecar", "example.invalid/sidecar:1"));

    // The same document as a JSON merge patch replaces the whole list.
    Deployment merge = client.apps().deployments().withName("d").patch(PatchContext.of(PatchType.JSON_MERGE),
        patch);
    assertThat(merge.getSpec().getTemplate().getSpec().getContainers()).extracting(Container::getName)
        .containsExactly("main");
  }

  @Test
  void serverSideApplyTracksFieldManagersAndReportsConflicts() {
    ConfigMap applied = client.configMaps().resource(configMap("cm", Map.of("owned-by-a", "1")))
        .fieldManager("manager-a").serverSideApply();
    assertThat(applied.getData()).containsEntry("owned-by-a", "1");
    assertThat(applied.getMetadata().getManagedFields()).extracting(ManagedFieldsEntry::getManager)
        .contains("manager-a");

    // Another manager setting a field that manager-a owns to another value conflicts ...
    ConfigMap competing = configMap("cm", Map.of("owned-by-a", "2"));
    assertThatThrownBy(() -> client.configMaps().resource(competing).fieldManager("manager-b").serverSideApply())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));

    // ... unless it forces, which takes the field over.
    ConfigMap forced = client.configMaps().resource(competing).fieldManager("manager-b").forceConflicts()
        .serverSideApply();
    assertThat(forced.getData()).containsEntry("owned-by-a", "2");

    // Applying without a field it used to own removes it (manager-a no longer owns "owned-by-a").
    ConfigMap byB = client.configMaps().resource(configMap("cm", Map.of("other", "x")))
        .fieldManager("manager-b").serverSideApply();
    assertThat(byB.getData()).containsOnlyKeys("other");
  }

  private static ConfigMap configMap(String name, Map<String, String> data) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().withData(data).build();
  }

  private static Deployment deployment() {
    return new DeploymentBuilder()
        .withNewMetadata().withName("d").endMetadata()
        .withNewSpec()
        .withReplicas(1)
        .withNewSelector().addToMatchLabels("app", "d").endSelector()
        .withNewTemplate()
        .withNewMetadata().addToLabels("app", "d").endMetadata()
        .withNewSpec()
        .withContainers(List.of(
            new io.fabric8.kubernetes.api.model.ContainerBuilder().withName("main")
                .withImage("example.invalid/main:1").build(),
            new io.fabric8.kubernetes.api.model.ContainerBuilder().withName("sidecar")
                .withImage("example.invalid/sidecar:1").build()))
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }
}
