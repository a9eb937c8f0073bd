package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import org.junit.jupiter.api.Test;

@LocalKubernetes
class CustomResourceIT {

  @Test
  void crdWithStatusSubresourceBecomesEstablishedAndSeparatesSpecFromStatus(LocalCluster cluster) {
    KubernetesClient client = cluster.client();
    Widgets widgets = Widgets.unique();

    CustomResourceDefinition crd = cluster.createCrd(widgets.crd(client));
    assertThat(LocalCluster.established(crd)).isTrue();
    assertThat(crd.getStatus().getAcceptedNames().getKind()).isEqualTo("Widget");

    GenericKubernetesResource created = widgets.in(client).resource(widgets.widget("w1", 3)).create();
    assertThat(created.getMetadata().getNamespace()).isEqualTo(cluster.namespace());
    assertThat(created.getMetadata().getGeneration()).isEqualTo(1L);

    // A write of the main resource ignores status (status subresource enabled) ...
    GenericKubernetesResource withStatus = widgets.in(client).withName("w1").get();
    withStatus.setAdditionalProperty("status", Map.of("phase", "Ignored"));
    GenericKubernetesResource updated = widgets.in(client).resource(withStatus).update();
    assertThat(updated.getAdditionalProperties()).doesNotContainKey("status");
    assertThat(updated.getMetadata().getGeneration()).isEqualTo(1L);

    // ... the status subresource changes only status and does not bump the generation ...
    updated.setAdditionalProperty("status", Map.of("phase", "Ready", "observedGeneration", 1));
    updated.setAdditionalProperty("spec", Map.of("size", 99));
    GenericKubernetesResource statusWritten = widgets.in(client).resource(updated).updateStatus();
    assertThat(statusWritten.getAdditionalProperties().get("status")).isEqualTo(
        Map.of("phase", "Ready", "observedGeneration", 1));
    assertThat(spec(statusWritten)).containsEntry("size", 3);
    assertThat(statusWritten.getMetadata().getGeneration()).isEqualTo(1L);

    // ... and a spec change bumps the generation and keeps the status.
    GenericKubernetesResource specChanged = widgets.in(client).withName("w1")
        .edit(w -> {
          w.setAdditionalProperty("spec", Map.of("size", 4, "color", "red"));
          return w;
        });
    assertThat(specChanged.getMetadata().getGeneration()).isEqualTo(2L);
    assertThat(spec(specChanged)).containsEntry("size", 4).containsEntry("color", "red");
    assertThat(specChanged.getAdditionalProperties()).containsKey("status");
  }

  @Test
  void crdSchemaIsEnforced(LocalCluster cluster) {
    KubernetesClient client = cluster.client();
    Widgets widgets = Widgets.unique();
    cluster.createCrd(widgets.crd(client));

    GenericKubernetesResource bad = widgets.widget("bad", 1);
    bad.setAdditionalProperty("spec", Map.of("size", "not-a-number"));
    assertThatThrownBy(() -> widgets.in(client).resource(bad).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));

    // Unknown fields are pruned by a structural schema.
    GenericKubernetesResource extra = widgets.widget("extra", 1);
    extra.setAdditionalProperty("spec", Map.of("size", 1, "unknownField", "x"));
    GenericKubernetesResource stored = widgets.in(client).resource(extra).create();
    assertThat(spec(stored)).containsOnlyKeys("size");
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> spec(GenericKubernetesResource r) {
    return (Map<String, Object>) r.getAdditionalProperties().get("spec");
  }
}
