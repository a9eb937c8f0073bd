package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.discovery.Discovery;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.informer.SharedInformers;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/** Discovery, shared informers and the API writer against a real API server. */
@LocalKubernetes
class KubeLayerIT {

  private static final ApiResource CONFIG_MAPS =
      new ApiResource("", "v1", "configmaps", "ConfigMap", true, java.util.Set.of());

  @Test
  void discoveryFindsBuiltInsAndLaterCrds(KubernetesClient client, LocalCluster cluster) {
    try (Discovery discovery = new Discovery(client, Duration.ofMillis(500), Schedulers.boundedElastic())) {
      discovery.start();
      await().atMost(Duration.ofSeconds(30)).until(discovery::hasSynced);
      ApiResource deployments = discovery.current().byResource("apps/v1", "deployments").orElseThrow();
      assertThat(deployments.kind()).isEqualTo("Deployment");
      assertThat(deployments.namespaced()).isTrue();
      assertThat(deployments.subresources()).contains("status", "scale");
      assertThat(discovery.current().byKind("v1", "Namespace").orElseThrow().namespaced()).isFalse();

      String group = "kl" + cluster.namespace().hashCode() % 1000 + ".example.com";
      var later = discovery.resource(group + "/v1", "gadgets").toFuture();
      assertThat(later).isNotDone();
      cluster.createCrd(new CustomResourceDefinitionBuilder()
          .withNewMetadata().withName("gadgets." + group).endMetadata()
          .withNewSpec().withGroup(group).withScope("Namespaced")
          .withNewNames().withKind("Gadget").withPlural("gadgets").withSingular("gadget").endNames()
          .addNewVersion().withName("v1").withServed(true).withStorage(true)
          .withNewSchema().withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
          .endOpenAPIV3Schema().endSchema().withNewSubresources().withNewStatus().endStatus().endSubresources()
          .endVersion().endSpec().build());
      ApiResource gadgets = later.orTimeout(30, java.util.concurrent.TimeUnit.SECONDS).join();
      assertThat(gadgets.kind()).isEqualTo("Gadget");
      assertThat(gadgets.hasStatusSubresource()).isTrue();
    }
  }

  @Test
  void informersShareIndexAndStream(KubernetesClient client, LocalCluster cluster) {
    String ns = cluster.namespace();
    ConfigMap owner = client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("owner")
        .endMetadata().build()).create();
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("owned")
        .addNewOwnerReference().withApiVersion("v1").withKind("ConfigMap").withName("owner")
        .withUid(owner.getMetadata().getUid()).withController(true).endOwnerReference().endMetadata().build()).create();

    try (SharedInformers informers = new SharedInformers(client, Duration.ofMinutes(30))) {
      InformerLease first = informers.acquire(CONFIG_MAPS);
      InformerLease second = informers.acquire(CONFIG_MAPS);
      assertThat(informers.running()).isEqualTo(1);
      await().atMost(Duration.ofSeconds(30)).until(first::hasSynced);

      assertThat(first.controlledBy(owner.getMetadata().getUid()))
          .extracting(o -> o.getMetadata().getName()).containsExactly("owned");
      assertThat(first.orphans(ns)).extracting(o -> o.getMetadata().getName()).containsExactly("owner");
      assertThat(second.get(ns, "owned")).isPresent();

      List<ObjectEvent> events = new CopyOnWriteArrayList<>();
      Disposable subscription = second.events()
          .filter(e -> ns.equals(e.object().getMetadata().getNamespace()))
          .subscribe(events::add);
      await().atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 2); // the cached objects, replayed as ADDED
      client.configMaps().withName("owner").edit(cm -> new ConfigMapBuilder(cm).addToData("k", "v").build());
      client.configMaps().withName("owned").delete();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(events).extracting(ObjectEvent::type)
          .contains(ObjectEvent.Type.UPDATED, ObjectEvent.Type.DELETED));
      subscription.dispose();

      first.close();
      first.close(); // idempotent
      assertThat(informers.running()).isEqualTo(1);
      second.close();
      assertThat(informers.running()).isZero();
    }
  }

  @Test
  void writerCountsRequestsAndHonoursUidPreconditions(KubernetesClient client, LocalCluster cluster) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ApiWriter api = new ApiWriter(client, new RateLimit(100, 10), 4, registry)) {
      GenericKubernetesResource object = new GenericKubernetesResource();
      object.setApiVersion("v1");
      object.setKind("ConfigMap");
      object.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("w")
          .withNamespace(cluster.namespace()).build());
      object.setAdditionalProperty("data", Map.of("a", "1"));
      GenericKubernetesResource created = api.create(CONFIG_MAPS, object).block();
      assertThat(created.getMetadata().getUid()).isNotBlank();

      assertThatThrownBy(() -> api.delete(CONFIG_MAPS, cluster.namespace(), "w", "not-the-uid").block())
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(409));
      assertThat(client.configMaps().withName("w").get()).isNotNull();

      api.delete(CONFIG_MAPS, cluster.namespace(), "w", created.getMetadata().getUid()).block();
      await().atMost(Duration.ofSeconds(30)).until(() -> client.configMaps().withName("w").get() == null);

      assertThat(registry.get(ApiWriter.REQUESTS_METRIC).tags("verb", "create", "resource", "configmaps", "code", "2xx")
          .counter().count()).isEqualTo(1);
      assertThat(registry.get(ApiWriter.REQUESTS_METRIC).tags("verb", "delete", "code", "409").counter().count())
          .isEqualTo(1);
      assertThat(registry.get(ApiWriter.REQUESTS_METRIC).tags("verb", "delete", "code", "2xx").counter().count())
          .isEqualTo(1);
    }
  }
}
