package dev.metareactor.testing.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The kubectl built by hack/build-k8s.sh, directly and through the hack/kubectl wrapper. */
@LocalKubernetes
class KubectlIT {

  @Test
  void kubectlListsNamespaces(LocalCluster cluster) {
    String out = cluster.kubectl("get", "ns", "-o", "name").orThrow();
    assertThat(out.lines()).contains("namespace/default", "namespace/kube-system",
        "namespace/" + cluster.namespace());
  }

  @Test
  void serverAndKubectlReportTheBuiltVersion(LocalCluster cluster, KubernetesClient client) {
    assertThat(client.getKubernetesVersion().getGitVersion()).isEqualTo("v1.34.4");
    assertThat(client.getKubernetesVersion().getMinor()).isEqualTo("34");
    String out = cluster.kubectl("version", "--client", "-o", "yaml").orThrow();
    assertThat(out).contains("gitVersion: v1.34.4");
  }

  @Test
  void kubectlApplyFromStdinLandsInTheTestNamespace(LocalCluster cluster, KubernetesClient client) {
    String manifest = """
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: from-kubectl
            data:
              greeting: hello
            """;
    cluster.kubectlWithInput(manifest, "apply", "-f", "-").orThrow();
    assertThat(client.configMaps().withName("from-kubectl").get().getData()).containsEntry("greeting", "hello");

    KubectlResult missing = cluster.kubectl("get", "configmap", "does-not-exist");
    assertThat(missing.succeeded()).isFalse();
    assertThat(missing.stderr()).contains("NotFound");
  }

  @Test
  void hackKubectlWrapperUsesKubeconfigFromTheEnvironment(LocalCluster cluster) throws Exception {
    Path wrapper = cluster.controlPlane().repoRoot().resolve("hack/kubectl");
    Path out = Files.createTempFile("hack-kubectl-", ".out");
    try {
      ProcessBuilder pb = new ProcessBuilder(wrapper.toString(), "get", "ns", cluster.namespace(),
          "-o", "jsonpath={.metadata.name}")
          .redirectErrorStream(true).redirectOutput(out.toFile());
      pb.environment().put("KUBECONFIG", cluster.kubeconfig().toString());
      Process p = pb.start();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      String output = Files.readString(out, StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as(output).isZero();
      assertThat(output.trim()).isEqualTo(cluster.namespace());
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
