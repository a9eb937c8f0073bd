package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@link StatusWriter}'s rule for 404 and 422 against a real API server (which {@code StatusWriterTest}'s fake copies):
 * a failed {@code test} of the UID is a 422 that one read tells from a status the CRD's schema refuses.
 */
@LocalKubernetes
class StatusWriterIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void aNamesakeIsNeverWrittenAndAStatusTheSchemaRefusesIsBadInput(LocalCluster cluster) {
    String group = "sw" + Math.abs(cluster.namespace().hashCode() % 1000) + ".example.com";
    JSONSchemaProps status = new JSONSchemaPropsBuilder().withType("object")
        .addToProperties("ready", new JSONSchemaPropsBuilder().withType("integer").build()).build();
    cluster.createCrd(new CustomResourceDefinitionBuilder()
        .withNewMetadata().withName("gauges." + group).endMetadata()
        .withNewSpec().withGroup(group).withScope("Namespaced")
        .withNewNames().withKind("Gauge").withPlural("gauges").withSingular("gauge").endNames()
        .addNewVersion().withName("v1").withServed(true).withStorage(true)
        .withNewSchema().withNewOpenAPIV3Schema().withType("object").addToProperties("status", status)
        .endOpenAPIV3Schema().endSchema().withNewSubresources().withNewStatus().endStatus().endSubresources()
        .endVersion().endSpec().build());
    ApiResource gauges = new ApiResource(group, "v1", "gauges", "Gauge", true, Set.of("status"));
    try (KubeApi kube = new KubeApi(KubeConfig.load(cluster.kubeconfig().toString()), 2)) {
      ApiWriter api = new ApiWriter(kube, new RateLimit(100, 10), new SimpleMeterRegistry());
      StatusWriter writer = new StatusWriter(api);
      KubeObject first = api.create(gauges, gauge(group, cluster.namespace())).block(TIMEOUT).object();

      assertThat(writer.write(gauges, first, null, json("{\"ready\": 1}")).block(TIMEOUT)).isTrue();
      assertThat(api.get(gauges, cluster.namespace(), "g").block(TIMEOUT).toTree().get("status"))
          .isEqualTo(json("{\"ready\": 1}"));

      assertThatThrownBy(() -> writer.write(gauges, first, null, json("{\"ready\": \"many\"}")).block(TIMEOUT))
          .isInstanceOf(StatusWriter.RefusedStatusException.class)
          .hasMessageStartingWith("can't update status: ")
          .hasMessageContaining("status.ready");

      api.delete(gauges, cluster.namespace(), "g", first.uid()).block(TIMEOUT);
      KubeObject namesake = api.create(gauges, gauge(group, cluster.namespace())).block(TIMEOUT).object();
      assertThat(writer.write(gauges, first, null, json("{\"ready\": 2}")).block(TIMEOUT))
          .as("the old object's status, over its namesake").isFalse();
      assertThat(api.get(gauges, cluster.namespace(), "g").block(TIMEOUT).toTree().get("status")).isNull();

      api.delete(gauges, cluster.namespace(), "g", namesake.uid()).block(TIMEOUT);
      assertThat(writer.write(gauges, namesake, null, json("{\"ready\": 3}")).block(TIMEOUT)).as("gone").isFalse();
    }
  }

  private static ObjectNode gauge(String group, String namespace) {
    ObjectNode gauge = KubeJson.nodes().objectNode().put("apiVersion", group + "/v1").put("kind", "Gauge");
    gauge.putObject("metadata").put("name", "g").put("namespace", namespace);
    return gauge;
  }

  private static ObjectNode json(String text) {
    return (ObjectNode) KubeJson.mapper().readTree(text);
  }
}
