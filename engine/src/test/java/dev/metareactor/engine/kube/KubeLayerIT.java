package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.discovery.Discovery;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.informer.SharedInformers;
import dev.metareactor.http.metrics.MetricCatalogue;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.node.ObjectNode;

/** The engine's own connection, discovery, shared informers and API writer against a real API server. */
@LocalKubernetes
class KubeLayerIT {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private KubeApi api;

  @BeforeEach
  void connect(LocalCluster cluster) {
    api = new KubeApi(KubeConfig.load(cluster.kubeconfig().toString()), 4);
  }

  @AfterEach
  void close() {
    api.close();
  }

  @Test
  void discoveryFindsBuiltInsAndLaterCrds(LocalCluster cluster) {
    try (Discovery discovery = new Discovery(api, Duration.ofMillis(500), Schedulers.parallel())) {
      discovery.start();
      await().atMost(Duration.ofSeconds(30)).until(discovery::hasSynced);
      ApiResource deployments = discovery.current().byResource("apps/v1", "deployments").orElseThrow();
      assertThat(deployments.kind()).isEqualTo("Deployment");
      assertThat(deployments.namespaced()).isTrue();
      assertThat(deployments.subresources()).contains("status", "scale");
      assertThat(discovery.current().byKind("v1", "Namespace").orElseThrow().namespaced()).isFalse();
      assertThat(discovery.current().byResource("v1", "configmaps").orElseThrow().kind()).isEqualTo("ConfigMap");

      String group = "kl" + Math.abs(cluster.namespace().hashCode() % 1000) + ".example.com";
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
      ApiResource gadgets = later.orTimeout(30, TimeUnit.SECONDS).join();
      assertThat(gadgets.kind()).isEqualTo("Gadget");
      assertThat(gadgets.hasStatusSubresource()).isTrue();
    }
  }

  @Test
  void informersShareIndexAndStream(KubernetesClient client, LocalCluster cluster) {
    String ns = cluster.namespace();
    ConfigMap owner = client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("owner")
        .addToLabels("app", "x").endMetadata().build()).create();
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("owned")
        .addNewOwnerReference().withApiVersion("v1").withKind("ConfigMap").withName("owner")
        .withUid(owner.getMetadata().getUid()).withController(true).endOwnerReference().endMetadata().build()).create();

    try (SharedInformers informers = new SharedInformers(api, Duration.ofMinutes(30), Schedulers.parallel(),
        new SimpleMeterRegistry(), "metacontroller")) {
      InformerLease first = informers.acquire(CONFIG_MAPS);
      InformerLease second = informers.acquire(CONFIG_MAPS);
      assertThat(informers.running()).isEqualTo(1);
      await().atMost(Duration.ofSeconds(30)).until(first::hasSynced);

      assertThat(first.controlledBy(owner.getMetadata().getUid())).extracting(KubeObject::name)
          .containsExactly("owned");
      assertThat(first.orphans(ns)).extracting(KubeObject::name).containsExactly("owner");
      assertThat(first.labelled("app", "x")).extracting(KubeObject::name).containsExactly("owner");
      assertThat(first.inNamespace(ns)).extracting(KubeObject::name).containsExactlyInAnyOrder("owner", "owned");
      KubeObject cached = second.get(ns, "owned").orElseThrow();
      // Listed objects of built-in types get their apiVersion and kind; managedFields are not kept.
      assertThat(cached.apiVersion()).isEqualTo("v1");
      assertThat(cached.kind()).isEqualTo("ConfigMap");
      assertThat(cached.toTree().path("metadata").has("managedFields")).isFalse();
      assertThat(cached.toTree().path("metadata").path("uid").asString()).isEqualTo(cached.uid());

      List<ObjectEvent> events = new CopyOnWriteArrayList<>();
      Disposable subscription = second.events()
          .filter(e -> ns.equals(e.object().namespace()))
          .subscribe(events::add);
      await().atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 2); // the cached objects, replayed as ADDED
      client.configMaps().withName("owner").edit(cm -> new ConfigMapBuilder(cm).addToData("k", "v")
          .editMetadata().removeFromLabels("app").endMetadata().build());
      client.configMaps().withName("owned").delete();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(events).extracting(ObjectEvent::type)
          .contains(ObjectEvent.Type.UPDATED, ObjectEvent.Type.DELETED));
      // The indexes follow: the label is gone, the owned object too.
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        assertThat(first.labelled("app", "x")).isEmpty();
        assertThat(first.controlledBy(owner.getMetadata().getUid())).isEmpty();
      });
      ObjectEvent update = events.stream().filter(e -> e.type() == ObjectEvent.Type.UPDATED).findFirst().orElseThrow();
      assertThat(update.previous().labels()).containsEntry("app", "x");
      assertThat(update.object().labels()).doesNotContainKey("app");
      subscription.dispose();

      first.close();
      first.close(); // idempotent
      assertThat(informers.running()).isEqualTo(1);
      second.close();
      assertThat(informers.running()).isZero();
    }
  }

  @Test
  void oneObjectInformersSeeOnlyTheirObject(KubernetesClient client, LocalCluster cluster) {
    String ns = cluster.namespace();
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("other").endMetadata().build())
        .create();
    try (SharedInformers informers = new SharedInformers(api, Duration.ofMinutes(30), Schedulers.parallel(),
        new SimpleMeterRegistry(), "metacontroller")) {
      InformerLease one = informers.acquireOne(CONFIG_MAPS, ns, "mine");
      await().atMost(Duration.ofSeconds(30)).until(one::hasSynced);
      assertThat(one.get(ns, "mine")).isEmpty();
      client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("mine").endMetadata()
          .addToData("a", "1").build()).create();
      await().atMost(Duration.ofSeconds(30)).until(() -> one.get(ns, "mine").isPresent());
      assertThat(one.list()).extracting(KubeObject::name).containsExactly("mine");
      one.close();
    }
  }

  @Test
  void writerCountsRequestsAndHonoursUidPreconditions(KubernetesClient client, LocalCluster cluster) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ApiWriter writer = new ApiWriter(api, new RateLimit(100, 10), registry);
    ObjectNode object = KubeJson.nodes().objectNode().put("apiVersion", "v1").put("kind", "ConfigMap");
    object.putObject("metadata").put("name", "w").put("namespace", cluster.namespace());
    object.putObject("data").put("a", "1");
    KubeObject created = writer.create(CONFIG_MAPS, object).block().object();
    assertThat(created.uid()).isNotBlank();
    assertThat(created.resourceVersion()).isNotBlank();

    assertThatThrownBy(() -> writer.create(CONFIG_MAPS, object).block())
        .isInstanceOf(ApiException.class)
        .satisfies(e -> assertThat(((ApiException) e).reason()).isEqualTo("AlreadyExists"));
    assertThatThrownBy(() -> writer.delete(CONFIG_MAPS, cluster.namespace(), "w", "not-the-uid").block())
        .isInstanceOf(ApiException.class)
        .satisfies(e -> assertThat(((ApiException) e).code()).isEqualTo(409));
    assertThat(client.configMaps().withName("w").get()).isNotNull();

    writer.delete(CONFIG_MAPS, cluster.namespace(), "w", created.uid()).block();
    await().atMost(Duration.ofSeconds(30)).until(() -> client.configMaps().withName("w").get() == null);

    String requests = MetricCatalogue.API_REQUESTS.name();
    assertThat(registry.get(requests).tags("verb", "create", "resource", "configmaps", "code", "2xx")
        .counter().count()).isEqualTo(1);
    assertThat(registry.get(requests).tags("verb", "create", "code", "409").counter().count())
        .isEqualTo(1);
    assertThat(registry.get(requests).tags("verb", "delete", "code", "409").counter().count())
        .isEqualTo(1);
    assertThat(registry.get(requests).tags("verb", "delete", "code", "2xx").counter().count())
        .isEqualTo(1);
  }

  /**
   * The create-only apply creates an object the manager owns exactly as an apply would (an {@code Apply} entry of the
   * configuration's fields, nothing else), and is refused with 409 for an object of the name that exists, which it
   * leaves exactly as it was; a name that is not one path segment is never sent, and one with other characters
   * reaches the server percent-encoded, as the name it is.
   */
  @Test
  void aCreateOnlyApplyCreatesAsAnApplyAndNeverTouchesAnExistingObject(KubernetesClient client,
      LocalCluster cluster) {
    ApiWriter writer = new ApiWriter(api, new RateLimit(100, 10), new SimpleMeterRegistry());
    ObjectNode configuration = KubeJson.nodes().objectNode().put("apiVersion", "v1").put("kind", "ConfigMap");
    configuration.putObject("metadata").put("name", "only-new").put("namespace", cluster.namespace());
    configuration.putObject("data").put("a", "1");

    ObjectNode created = (ObjectNode) KubeJson.mapper().readTree(
        writer.applyCreate(CONFIG_MAPS, configuration, "metacontroller").block().answer());
    assertThat(created.at("/metadata/managedFields")).singleElement().satisfies(entry -> {
      assertThat(entry.path("manager").asString()).isEqualTo("metacontroller");
      assertThat(entry.path("operation").asString()).isEqualTo("Apply");
      assertThat(entry.path("fieldsV1")).isEqualTo(KubeJson.mapper().readTree("{\"f:data\":{\"f:a\":{}}}"));
    });

    ConfigMap theirs = client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("theirs")
        .addToLabels("app", "mine").endMetadata().addToData("a", "mine").build()).create();
    ((ObjectNode) configuration.get("metadata")).put("name", "theirs");
    assertThatThrownBy(() -> writer.applyCreate(CONFIG_MAPS, configuration, "metacontroller").block())
        .satisfies(e -> assertThat(ApiException.codeOf(e)).isEqualTo(409));
    ConfigMap after = client.configMaps().withName("theirs").get();
    assertThat(after.getMetadata().getResourceVersion()).isEqualTo(theirs.getMetadata().getResourceVersion());
    assertThat(after.getData()).containsExactly(Map.entry("a", "mine"));

    for (String name : List.of("theirs/status", "../theirs", "theirs%2Fstatus")) {
      ((ObjectNode) configuration.get("metadata")).put("name", name);
      assertThatThrownBy(() -> writer.applyCreate(CONFIG_MAPS, configuration, "metacontroller").block()).as(name)
          .isInstanceOf(IllegalArgumentException.class);
    }
    // Sent percent-encoded, read back by the server as the name it is, and refused by its validation.
    for (String name : List.of("Bad_Name", "a b?c#d")) {
      ((ObjectNode) configuration.get("metadata")).put("name", name);
      assertThatThrownBy(() -> writer.applyCreate(CONFIG_MAPS, configuration, "metacontroller").block()).as(name)
          .satisfies(e -> assertThat(ApiException.codeOf(e)).as("%s", e).isEqualTo(422));
    }
    assertThat(client.configMaps().withName("theirs").get().getMetadata().getResourceVersion())
        .isEqualTo(theirs.getMetadata().getResourceVersion());
  }
}
