package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import org.junit.jupiter.api.Test;

@LocalKubernetes
class FinalizerIT {

  @Test
  void finalizerKeepsADeletedObjectUntilItIsRemoved(KubernetesClient client) throws InterruptedException {
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("held")
        .addToFinalizers("metareactor.dev/hold").endMetadata().addToData("k", "v").build()).create();

    client.configMaps().withName("held").delete();

    ConfigMap terminating = client.configMaps().withName("held").get();
    assertThat(terminating).isNotNull();
    assertThat(terminating.getMetadata().getDeletionTimestamp()).isNotBlank();
    assertThat(terminating.getMetadata().getFinalizers()).containsExactly("metareactor.dev/hold");

    // Still there a while later: nothing but us removes a custom finalizer.
    Thread.sleep(2_000);
    assertThat(client.configMaps().withName("held").get()).isNotNull();

    client.configMaps().withName("held").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"finalizers\":null}}");
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
        .until(() -> client.configMaps().withName("held").get() == null);
  }
}
