package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The extension itself: injection, per-test namespaces, the class's own namespace for what its tests share, clean-up,
 * one control plane per JVM.
 */
@LocalKubernetes
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExtensionIT {

  private static String firstNamespace;
  private static String firstExtraNamespace;
  private static String firstCrd;
  private static ControlPlane firstPlane;
  private static LocalCluster shared;
  private static String sharedNamespaceSeenByATest;

  LocalCluster cluster;
  KubernetesClient client;

  @BeforeAll
  static void share(LocalCluster classCluster) {
    shared = classCluster;
  }

  @Test
  @Order(1)
  void injectsTheSameClusterIntoFieldsAndParameters(LocalCluster param, KubernetesClient clientParam) {
    assertThat(cluster).isSameAs(param);
    assertThat(client).isSameAs(clientParam).isSameAs(cluster.client());
    assertThat(client.getNamespace()).isEqualTo(cluster.namespace());
    assertThat(cluster.namespace()).startsWith("it-extensionit-").hasSizeLessThanOrEqualTo(63);
    assertThat(Files.isReadable(cluster.kubeconfig())).isTrue();

    Namespace ns = client.namespaces().withName(cluster.namespace()).get();
    assertThat(ns.getMetadata().getLabels()).containsEntry(LocalCluster.TEST_LABEL, "true");
    assertThat(ns.getStatus().getPhase()).isEqualTo("Active");

    Widgets widgets = Widgets.unique();
    firstCrd = cluster.createCrd(widgets.crd(client)).getMetadata().getName();
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("left-behind").endMetadata()
        .build()).create();
    firstNamespace = cluster.namespace();
    firstPlane = cluster.controlPlane();
    firstExtraNamespace = cluster.createNamespace("extensionit-extra");
    assertThat(firstExtraNamespace).startsWith("it-extensionit-extra-").isNotEqualTo(firstNamespace);
    assertThat(client.namespaces().withName(firstExtraNamespace).get().getMetadata().getLabels())
        .containsEntry(LocalCluster.TEST_LABEL, "true");
    sharedNamespaceSeenByATest = shared.namespace();
  }

  @Test
  @Order(2)
  void theNextTestGetsANewNamespaceAndThePreviousOneIsCleanedUp() {
    assertThat(firstNamespace).as("test order").isNotNull();
    assertThat(cluster.namespace()).isNotEqualTo(firstNamespace);
    assertThat(cluster.controlPlane()).isSameAs(firstPlane).isSameAs(ControlPlane.get());

    // The namespace controller finishes the deletion of the previous namespace and its contents.
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
        .until(() -> client.namespaces().withName(firstNamespace).get() == null);
    // So is the one made by createNamespace.
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
        .until(() -> client.namespaces().withName(firstExtraNamespace).get() == null);
    // The CRD registered through createCrd is gone too.
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .until(() -> client.apiextensions().v1().customResourceDefinitions().withName(firstCrd).get() == null);
  }

  @Test
  @Order(3)
  void namespaceDeletionCompletesWithContents() {
    String other = cluster.namespace() + "-x";
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
        .create();
    client.configMaps().inNamespace(other).resource(new ConfigMapBuilder().withNewMetadata().withName("c")
        .endMetadata().build()).create();

    client.namespaces().withName(other).delete();

    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
        .until(() -> client.namespaces().withName(other).get() == null);
  }

  /** The {@code @BeforeAll} method's cluster: one of the class's own, outliving each test's. */
  @Test
  @Order(4)
  void aBeforeAllMethodGetsTheClassClusterEveryTestShares() {
    assertThat(shared).as("injected into @BeforeAll").isNotNull().isNotSameAs(cluster);
    assertThat(shared.namespace()).startsWith("it-extensionit-").isNotEqualTo(cluster.namespace())
        .isEqualTo(sharedNamespaceSeenByATest);
    assertThat(shared.controlPlane()).isSameAs(ControlPlane.get());
    assertThat(shared.client().getNamespace()).isEqualTo(shared.namespace());
    Namespace ns = client.namespaces().withName(shared.namespace()).get();
    assertThat(ns.getStatus().getPhase()).as("the class's namespace, after earlier tests").isEqualTo("Active");
  }

  @AfterAll
  static void theSameClassClusterUntilTheEnd(LocalCluster classCluster) {
    assertThat(classCluster).isSameAs(shared);
  }
}
