package dev.metareactor.engine.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Both discovery formats read into the same {@link ApiResource}s. */
class DiscoveryFormatsTest {

  @Test
  void aggregatedDiscoveryListsEveryGroupVersionWithScopeAndSubresources() {
    List<ApiResource> resources = Discovery.aggregated(KubeJson.mapper().readTree("""
        {"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
          {"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[
            {"resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},
             "scope":"Namespaced","subresources":[{"subresource":"status"},{"subresource":"scale"}]}]}]},
          {"metadata":{"name":""},"versions":[{"version":"v1","resources":[
            {"resource":"namespaces","responseKind":{"group":"","version":"v1","kind":"Namespace"},
             "scope":"Cluster"}]}]}]}"""));
    assertThat(resources).containsExactly(
        new ApiResource("apps", "v1", "deployments", "Deployment", true, Set.of("status", "scale")),
        new ApiResource("", "v1", "namespaces", "Namespace", false, Set.of()));
  }

  @Test
  void aLegacyResourceListFoldsSubresourcesIntoTheirResources() {
    List<ApiResource> resources = Discovery.legacy("apps/v1", KubeJson.mapper().readTree("""
        {"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
          {"name":"deployments","namespaced":true,"kind":"Deployment"},
          {"name":"deployments/status","namespaced":true,"kind":"Deployment"},
          {"name":"deployments/scale","namespaced":true,"kind":"Scale"},
          {"name":"controllerrevisions","namespaced":true,"kind":"ControllerRevision"}]}"""));
    assertThat(resources).containsExactly(
        new ApiResource("apps", "v1", "deployments", "Deployment", true, Set.of("status", "scale")),
        new ApiResource("apps", "v1", "controllerrevisions", "ControllerRevision", true, Set.of()));
  }
}
