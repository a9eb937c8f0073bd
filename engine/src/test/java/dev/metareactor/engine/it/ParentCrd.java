package dev.metareactor.engine.it;

import dev.metareactor.testing.k8s.LocalCluster;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * A custom resource type made for one test: a group of its own (so tests never see each other's objects),
 * schemaless ({@code x-kubernetes-preserve-unknown-fields}), with the status subresource unless asked otherwise.
 *
 * @param group the API group, unique per test
 * @param kind the kind
 * @param plural the plural resource name
 * @param namespaced whether its objects live in namespaces
 * @param statusSubresource whether it serves the status subresource
 */
public record ParentCrd(String group, String kind, String plural, boolean namespaced, boolean statusSubresource) {

  public static final String VERSION = "v1";

  /** A new group name for {@code kind}; nothing is created. */
  public static ParentCrd named(String kind) {
    String lower = kind.toLowerCase(Locale.ROOT);
    return new ParentCrd(lower + "-" + UUID.randomUUID().toString().substring(0, 8) + ".it.metareactor.dev", kind,
        lower + "s", true, true);
  }

  /** The same type, cluster-scoped. */
  public ParentCrd clusterScoped() {
    return new ParentCrd(group, kind, plural, false, statusSubresource);
  }

  /** The same type, without the status subresource. */
  public ParentCrd withoutStatusSubresource() {
    return new ParentCrd(group, kind, plural, namespaced, false);
  }

  /** Creates it (deleted after the test) and waits until it is Established. */
  public static ParentCrd create(LocalCluster cluster, String kind) {
    return named(kind).createIn(cluster);
  }

  /** Creates this definition in the cluster, waiting until it is Established; deleted after the test. */
  public ParentCrd createIn(LocalCluster cluster) {
    cluster.createCrd(definition());
    return this;
  }

  public String apiVersion() {
    return group + "/" + VERSION;
  }

  public CustomResourceDefinition definition() {
    var version = new CustomResourceDefinitionBuilder()
        .withNewMetadata().withName(plural + "." + group).endMetadata()
        .withNewSpec().withGroup(group).withScope(namespaced ? "Namespaced" : "Cluster")
        .withNewNames().withKind(kind).withPlural(plural).withSingular(kind.toLowerCase(Locale.ROOT)).endNames()
        .addNewVersion().withName(VERSION).withServed(true).withStorage(true)
        .withNewSchema().withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
        .endOpenAPIV3Schema().endSchema();
    if (statusSubresource) {
      version = version.withNewSubresources().withNewStatus().endStatus().endSubresources();
    }
    return version.endVersion().endSpec().build();
  }

  /** fabric8's generic client for these objects, addressed without discovery. */
  public MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>>
      in(KubernetesClient client) {
    return client.genericKubernetesResources(new ResourceDefinitionContext.Builder()
        .withGroup(group).withVersion(VERSION).withPlural(plural).withKind(kind).withNamespaced(namespaced).build());
  }

  /** A new object of this type with the given spec (not created); {@code namespace} is ignored if cluster-scoped. */
  public GenericKubernetesResource object(String namespace, String name, Map<String, Object> spec) {
    GenericKubernetesResource object = new GenericKubernetesResource();
    object.setApiVersion(apiVersion());
    object.setKind(kind);
    object.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
        .withNamespace(namespaced ? namespace : null).withName(name).build());
    object.setAdditionalProperty("spec", spec);
    return object;
  }
}
