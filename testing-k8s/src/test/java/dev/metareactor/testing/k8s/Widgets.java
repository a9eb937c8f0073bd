package dev.metareactor.testing.k8s;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** A namespaced test CRD "Widget" with a status subresource, in a group unique to each call (CRD deletion is slow). */
final class Widgets {

  final String group;
  final String apiVersion;
  final ResourceDefinitionContext context;

  private Widgets(String group) {
    this.group = group;
    this.apiVersion = group + "/v1";
    this.context = new ResourceDefinitionContext.Builder().withGroup(group).withVersion("v1")
        .withPlural("widgets").withKind("Widget").withNamespaced(true).build();
  }

  static Widgets unique() {
    return new Widgets("w" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36) + ".it.metareactor.dev");
  }

  CustomResourceDefinition crd(KubernetesClient client) {
    String yaml = """
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: widgets.%1$s
            spec:
              group: %1$s
              scope: Namespaced
              names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
              versions:
              - name: v1
                served: true
                storage: true
                subresources:
                  status: {}
                schema:
                  openAPIV3Schema:
                    type: object
                    properties:
                      spec:
                        type: object
                        properties:
                          size: {type: integer}
                          color: {type: string}
                      status:
                        type: object
                        properties:
                          phase: {type: string}
                          observedGeneration: {type: integer}
            """.formatted(group);
    return client.getKubernetesSerialization().unmarshal(yaml, CustomResourceDefinition.class);
  }

  MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> in(
      KubernetesClient client) {
    return client.genericKubernetesResources(context);
  }

  GenericKubernetesResource widget(String name, int size) {
    return new GenericKubernetesResourceBuilder().withApiVersion(apiVersion).withKind("Widget")
        .withNewMetadata().withName(name).endMetadata()
        .withAdditionalProperties(Map.of("spec", Map.of("size", size, "color", "blue")))
        .build();
  }
}
