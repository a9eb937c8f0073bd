package dev.metareactor.engine.it;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.testing.k8s.LocalCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The engine's install as users make it, in namespace {@value #NAMESPACE} (Metacontroller's): kubectl in that
 * namespace, the repository's kustomizations and Helm chart, upstream's install files (as data, from
 * {@code ../shared/upstream/}), and the removal of an install but the CRDs, which other tests use.
 */
public final class Install {

  public static final String NAMESPACE = "metacontroller";
  /** Upstream Metacontroller's release whose install files and binary {@code ../shared/upstream/} holds. */
  public static final String UPSTREAM_RELEASE = "v4.17.2";

  private Install() {}

  /** The repository's kustomization {@code manifests/<name>}. */
  public static Path kustomization(LocalCluster cluster, String name) {
    return cluster.controlPlane().repoRoot().resolve("manifests").resolve(name);
  }

  /**
   * {@code ../shared/upstream/} beside the repository (upstream's binary and, in {@code v4.17.2/}, its manifests and
   * chart); the test is skipped, saying why, where this machine has none.
   */
  public static Path upstreamOrSkip(LocalCluster cluster) {
    Path upstream = cluster.controlPlane().repoRoot().resolve("../shared/upstream").normalize();
    Assumptions.assumeTrue(Files.isDirectory(upstream.resolve(UPSTREAM_RELEASE)), "../shared/upstream/ (upstream "
        + "Metacontroller's binary and install files, " + UPSTREAM_RELEASE + ") is absent on this machine: skipped");
    return upstream;
  }

  /** kubectl in the install's namespace (the cluster's kubectl works in the test's own by default). */
  public static String kubectl(LocalCluster cluster, String... args) {
    return cluster.kubectl(inNamespace(args)).orThrow();
  }

  /** The same with {@code stdin} as kubectl's input ({@code -f -}). */
  public static String kubectlWithInput(LocalCluster cluster, String stdin, String... args) {
    return cluster.kubectlWithInput(stdin, inNamespace(args)).orThrow();
  }

  private static String[] inNamespace(String... args) {
    String[] withNamespace = Arrays.copyOf(args, args.length + 1);
    withNamespace[args.length] = "--namespace=" + NAMESPACE;
    return withNamespace;
  }

  /** All an install made but the CRDs, which the other tests use. */
  public static void uninstallAllButCrds(LocalCluster cluster) {
    kubectl(cluster, "delete", "namespace/" + NAMESPACE, "clusterrolebinding/metacontroller",
        "clusterrole/metacontroller", "clusterrole/metacontroller-engine", "clusterrole/metacontroller-rules",
        "clusterrole/aggregate-metacontroller-view", "clusterrole/aggregate-metacontroller-edit", "--ignore-not-found");
    await().atMost(TIMEOUT).until(() -> cluster.client().namespaces().withName(NAMESPACE).get() == null);
  }

  /** Runs {@code hack/helm.sh} (Helm built from the Go module proxy, cached outside the repository). */
  public static String helm(LocalCluster cluster, String... args) throws Exception {
    Path repo = cluster.controlPlane().repoRoot();
    List<String> command = new ArrayList<>(List.of("bash", repo.resolve("hack/helm.sh").toString()));
    command.addAll(List.of(args));
    Path out = Files.createTempFile("helm-", ".out");
    try {
      Process process = new ProcessBuilder(command).directory(repo.toFile()).redirectErrorStream(false)
          .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      assertThat(process.waitFor(15, TimeUnit.MINUTES)).as("helm %s finished", args[0]).isTrue();
      String output = Files.readString(out, StandardCharsets.UTF_8);
      assertThat(process.exitValue()).as("exit code of helm %s; its output:%n%s", String.join(" ", args), output)
          .isZero();
      return output;
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
