package dev.metareactor.testing.k8s;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one test gets from {@link KubernetesClusterExtension}: the shared control plane, a namespace of its own and a
 * client whose default namespace is that namespace. {@link #close()} deletes the namespace (the namespace controller
 * deletes its contents) and every cluster-scoped object registered through {@link #createCrd} or
 * {@link #deleteAfterTest}.
 */
public final class LocalCluster implements AutoCloseable {

  public static final String TEST_LABEL = "metareactor.dev/it";

  private static final Logger LOG = LoggerFactory.getLogger(LocalCluster.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Duration KUBECTL_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration CRD_TIMEOUT = Duration.ofSeconds(60);

  private final ControlPlane plane;
  private final String namespace;
  private final KubernetesClient client;
  private final List<HasMetadata> clusterScoped = Collections.synchronizedList(new ArrayList<>());

  LocalCluster(ControlPlane plane, String namespacePrefix) {
    this.plane = plane;
    this.namespace = namespaceName(namespacePrefix);
    Config base;
    try {
      base = Config.fromKubeconfig(Files.readString(plane.kubeconfig()));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + plane.kubeconfig(), e);
    }
    this.client = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(base).withNamespace(namespace).build())
        .build();
    try {
      client.namespaces().resource(labelled(namespace)).create();
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  /** The kubeconfig of the control plane (admin, a member of system:masters). */
  public Path kubeconfig() {
    return plane.kubeconfig();
  }

  /** Client whose default namespace is {@link #namespace()}; closed after the test. */
  public KubernetesClient client() {
    return client;
  }

  /** A namespace created for this test, deleted after it. */
  public String namespace() {
    return namespace;
  }

  public ControlPlane controlPlane() {
    return plane;
  }

  /**
   * Creates a CustomResourceDefinition, waits until it is Established and deletes it after the test (which also
   * deletes all its custom resources).
   */
  public CustomResourceDefinition createCrd(CustomResourceDefinition crd) {
    CustomResourceDefinition created = client.apiextensions().v1().customResourceDefinitions().resource(crd)
        .create();
    clusterScoped.add(created);
    return client.apiextensions().v1().customResourceDefinitions().resource(created)
        .waitUntilCondition(LocalCluster::established, CRD_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  /**
   * Creates another namespace for this test, named from {@code prefix} as the test's own is, and deletes it after the
   * test with the test's own: for objects of one name side by side, or Events kept apart.
   */
  public String createNamespace(String prefix) {
    return deleteAfterTest(client.namespaces().resource(labelled(namespaceName(prefix))).create()).getMetadata()
        .getName();
  }

  /** A namespace of that name, labelled {@value #TEST_LABEL}. */
  private static Namespace labelled(String name) {
    return new NamespaceBuilder().withNewMetadata().withName(name).addToLabels(TEST_LABEL, "true").endMetadata()
        .build();
  }

  /** Registers a cluster-scoped object (ClusterRole, webhook configuration, ...) to delete after the test. */
  public <T extends HasMetadata> T deleteAfterTest(T clusterScopedObject) {
    clusterScoped.add(Objects.requireNonNull(clusterScopedObject));
    return clusterScopedObject;
  }

  /** Runs the kubectl built with the control plane, with {@code --namespace} set to this test's namespace. */
  public KubectlResult kubectl(String... args) {
    return kubectlWithInput(null, args);
  }

  /** Like {@link #kubectl(String...)}, with {@code stdin} as kubectl's standard input (e.g. {@code apply -f -}). */
  public KubectlResult kubectlWithInput(String stdin, String... args) {
    List<String> command = new ArrayList<>();
    command.add(plane.kubectlBinary().toString());
    command.add("--kubeconfig=" + plane.kubeconfig());
    command.add("--namespace=" + namespace);
    command.addAll(List.of(args));
    Path in = null;
    Path out = null;
    Path err = null;
    try {
      out = Files.createTempFile("kubectl-", ".out");
      err = Files.createTempFile("kubectl-", ".err");
      ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
      if (stdin != null) {
        in = Files.createTempFile("kubectl-", ".in");
        Files.writeString(in, stdin);
        pb.redirectInput(in.toFile());
      } else {
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      }
      Process p = pb.start();
      if (!p.waitFor(KUBECTL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not finish within " + KUBECTL_TIMEOUT);
      }
      return new KubectlResult(List.copyOf(command), p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + command, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command, e);
    } finally {
      deleteQuietly(in);
      deleteQuietly(out);
      deleteQuietly(err);
    }
  }

  /** Deletes the namespace and the registered cluster-scoped objects, then closes the client. Does not wait. */
  @Override
  public void close() {
    try {
      List<HasMetadata> toDelete;
      synchronized (clusterScoped) {
        toDelete = new ArrayList<>(clusterScoped);
        clusterScoped.clear();
      }
      Collections.reverse(toDelete);
      deleteQuietly(() -> client.namespaces().withName(namespace)
          .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete(), "namespace " + namespace);
      for (HasMetadata o : toDelete) {
        deleteQuietly(() -> client.resource(o).withPropagationPolicy(DeletionPropagation.BACKGROUND).delete(),
            o.getKind() + " " + o.getMetadata().getName());
      }
    } finally {
      client.close();
    }
  }

  private static void deleteQuietly(Runnable delete, String what) {
    try {
      delete.run();
    } catch (KubernetesClientException e) {
      LOG.warn("Could not delete {} after the test: {}", what, e.getMessage());
    }
  }

  private static void deleteQuietly(Path p) {
    if (p != null) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // a temp file left behind is harmless
      }
    }
  }

  static boolean established(CustomResourceDefinition crd) {
    return crd != null && crd.getStatus() != null && crd.getStatus().getConditions() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** {@code it-<prefix>-<5 random chars>}, a valid DNS label of at most 63 characters. */
  static String namespaceName(String prefix) {
    String slug = prefix == null ? "" : prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-")
        .replaceAll("^-+|-+$", "");
    if (slug.length() > 50) {
      slug = slug.substring(0, 50).replaceAll("-+$", "");
    }
    StringBuilder suffix = new StringBuilder(5);
    String alphabet = "bcdfghjklmnpqrstvwxz2456789";
    for (int i = 0; i < 5; i++) {
      suffix.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
    }
    return slug.isEmpty() ? "it-" + suffix : "it-" + slug + "-" + suffix;
  }
}
