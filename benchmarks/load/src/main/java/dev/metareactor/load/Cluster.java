package dev.metareactor.load;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local control plane the engines run against, started (or reused) with {@code hack/local-cluster.sh up}
 * (honouring {@code METAREACTOR_STATE}), plus what the harness does to it directly: CRDs, namespaces, bulk deletes
 * and the PEM files {@code loadkit} authenticates with. The harness works as the admin; engines get their own
 * identity ({@link #engineKubeconfig}), whose requests alone the API server's audit log records.
 */
final class Cluster implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Cluster.class);

  static final ResourceDefinitionContext PARENTS = new ResourceDefinitionContext.Builder()
      .withGroup("bench.metareactor.dev").withVersion("v1").withKind("LoadParent").withPlural("loadparents")
      .withNamespaced(true).build();
  static final ResourceDefinitionContext COMPOSITE_CONTROLLERS = new ResourceDefinitionContext.Builder()
      .withGroup("metacontroller.k8s.io").withVersion("v1alpha1").withKind("CompositeController")
      .withPlural("compositecontrollers").withNamespaced(false).build();
  static final ResourceDefinitionContext DECORATOR_CONTROLLERS = new ResourceDefinitionContext.Builder()
      .withGroup("metacontroller.k8s.io").withVersion("v1alpha1").withKind("DecoratorController")
      .withPlural("decoratorcontrollers").withNamespaced(false).build();
  static final ResourceDefinitionContext MAP_CONTROLLERS = new ResourceDefinitionContext.Builder()
      .withGroup("metacontroller.k8s.io").withVersion("v1alpha1").withKind("MapController")
      .withPlural("mapcontrollers").withNamespaced(false).build();
  /** The label on every bench object: {@code true} on parents and children, {@code input} on a map's inputs. */
  static final String BENCH_LABEL = "bench.metareactor.dev/load";

  private final Path engineKubeconfig;
  private final Path stateDir;
  private final RequestCounts.AuditLog auditLog;
  private final KubernetesClient client;

  private Cluster(Path kubeconfig, Path engineKubeconfig, Path auditLog) throws IOException {
    this.engineKubeconfig = engineKubeconfig;
    this.stateDir = kubeconfig.getParent();
    this.auditLog = new RequestCounts.AuditLog(auditLog);
    Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
    config.setMaxConcurrentRequests(256);
    config.setMaxConcurrentRequestsPerHost(256);
    this.client = new KubernetesClientBuilder().withConfig(config).build();
  }

  /**
   * Starts or reuses the local control plane.
   *
   * @param state its state directory ({@code METAREACTOR_STATE}), or {@code null} for the script's default
   */
  static Cluster connect(Path repository, Path state) throws IOException, InterruptedException {
    LOG.info("starting (or reusing) the local control plane");
    ProcessBuilder builder = new ProcessBuilder(repository.resolve("hack/local-cluster.sh").toString(), "up")
        .redirectError(ProcessBuilder.Redirect.INHERIT);
    if (state != null) {
      builder.environment().put("METAREACTOR_STATE", state.toString());
    }
    Process up = builder.start();
    String out = new String(up.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (up.waitFor() != 0) {
      throw new IllegalStateException("hack/local-cluster.sh up failed");
    }
    Map<String, Path> env = new HashMap<>();
    for (String line : out.split("\n")) {
      if (line.startsWith("export ") && line.contains("=")) {
        env.put(line.substring(7, line.indexOf('=')), Path.of(line.substring(line.indexOf('=') + 1).replace("'", "")));
      }
    }
    if (!env.containsKey("METAREACTOR_ENGINE_KUBECONFIG") || !env.containsKey("METAREACTOR_AUDIT_LOG")) {
      throw new IllegalStateException("the running local cluster predates the engine identity and its audit log;"
          + " restart it: hack/local-cluster.sh down && hack/local-cluster.sh up");
    }
    return new Cluster(env.get("KUBECONFIG"), env.get("METAREACTOR_ENGINE_KUBECONFIG"),
        env.get("METAREACTOR_AUDIT_LOG"));
  }

  /** What an engine connects with: a member of system:masters whose requests the audit log records. */
  Path engineKubeconfig() {
    return engineKubeconfig;
  }

  /**
   * CPU seconds used so far by the control plane (etcd, kube-apiserver, kube-controller-manager, from the pid files
   * of {@code hack/local-cluster.sh}): the API server is what an engine's work costs beyond the engine itself.
   */
  double controlPlaneCpuSeconds() throws IOException {
    double cpu = 0;
    for (String component : List.of("etcd", "kube-apiserver", "kube-controller-manager")) {
      Path pidFile = stateDir.resolve("pids").resolve(component + ".pid");
      if (Files.exists(pidFile)) {
        cpu += new ProcessTree(Long.parseLong(Files.readString(pidFile).trim().split("\\s+")[0])).sample()
            .cpuSeconds();
      }
    }
    return cpu;
  }

  /**
   * Waits until the control plane is quiet (under 5% of a core for two seconds running, or {@code timeout}):
   * a bulk delete leaves the garbage collector, watch fan-out and etcd busy for a while, and that work must not be
   * billed to the next engine's run.
   */
  void awaitQuiet(Duration timeout) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    int quietSeconds = 0;
    double last = controlPlaneCpuSeconds();
    while (quietSeconds < 2 && System.nanoTime() < deadline) {
      Thread.sleep(1000);
      double now = controlPlaneCpuSeconds();
      quietSeconds = now - last < 0.05 ? quietSeconds + 1 : 0;
      last = now;
    }
  }

  RequestCounts.AuditLog auditLog() {
    return auditLog;
  }

  KubernetesClient client() {
    return client;
  }

  /** The server URL and the admin's credentials as PEM files, for {@code loadkit}. */
  List<String> writeCredentials(Path dir) throws IOException {
    Config config = client.getConfiguration();
    Files.createDirectories(dir);
    Path ca = write(dir.resolve("ca.pem"), config.getCaCertData(), config.getCaCertFile());
    Path cert = write(dir.resolve("client.pem"), config.getClientCertData(), config.getClientCertFile());
    Path key = write(dir.resolve("client-key.pem"), config.getClientKeyData(), config.getClientKeyFile());
    String server = config.getMasterUrl().replaceAll("/+$", "");
    return List.of("--server=" + server, "--ca=" + ca, "--cert=" + cert, "--key=" + key);
  }

  private static Path write(Path target, String base64Data, String file) throws IOException {
    if (base64Data != null && !base64Data.isBlank()) {
      Files.write(target, Base64.getDecoder().decode(base64Data.trim()));
    } else if (file != null) {
      Files.copy(Path.of(file), target, StandardCopyOption.REPLACE_EXISTING);
    } else {
      throw new IllegalStateException("the kubeconfig has no client certificate: loadkit needs one");
    }
    return target;
  }

  /** Installs Metacontroller's CRDs (from the repository) and the bench CRD, and waits until they are served. */
  void installCrds(Path repository) throws IOException {
    Path crdsFile = repository.resolve("manifests/production/metacontroller-crds-v1.yaml");
    try (InputStream crds = Files.newInputStream(crdsFile);
        InputStream bench = LoadHarness.class.getResourceAsStream("/loadparents-crd.yaml")) {
      for (InputStream in : List.of(crds, bench)) {
        for (HasMetadata object : client.load(in).items()) {
          CustomResourceDefinition crd = (CustomResourceDefinition) object;
          client.apiextensions().v1().customResourceDefinitions().resource(crd).forceConflicts()
              .fieldManager("metareactor-load").serverSideApply();
          client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
              .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getConditions() != null
                  && c.getStatus().getConditions().stream()
                      .anyMatch(k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())),
                  60, TimeUnit.SECONDS);
        }
      }
    }
  }

  void ensureNamespace(String namespace) {
    if (client.namespaces().withName(namespace).get() == null) {
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .create();
    }
  }

  /** Creates or replaces a cluster-scoped controller object. */
  void putController(ResourceDefinitionContext type, GenericKubernetesResource controller) {
    client.genericKubernetesResources(type).resource(controller).forceConflicts().fieldManager("metareactor-load")
        .serverSideApply();
  }

  void deleteControllers() {
    for (ResourceDefinitionContext type : List.of(COMPOSITE_CONTROLLERS, DECORATOR_CONTROLLERS, MAP_CONTROLLERS)) {
      client.genericKubernetesResources(type).withLabel(BENCH_LABEL).delete();
    }
  }

  /**
   * Deletes every bench parent and ConfigMap (children and inputs) of {@code namespace} (two delete-collection
   * requests) and waits until
   * they are gone, so the next run starts from nothing and no deletion competes with it for the CPU.
   */
  void deleteBenchObjects(String namespace, Duration timeout) throws InterruptedException {
    var parents = client.genericKubernetesResources(PARENTS).inNamespace(namespace);
    var configMaps = client.configMaps().inNamespace(namespace);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        parents.withLabel(BENCH_LABEL).delete();
        configMaps.withLabel(BENCH_LABEL).delete();
      } catch (KubernetesClientException e) {
        LOG.debug("delete collection: {}", e.getMessage());
      }
      // Whether any is left, not how many: a list of 40,000 objects would cost the driver's heap and the API server.
      ListOptions one = new ListOptionsBuilder().withLimit(1L).build();
      boolean left = !parents.withLabel(BENCH_LABEL).list(one).getItems().isEmpty()
          || !configMaps.withLabel(BENCH_LABEL).list(one).getItems().isEmpty();
      if (!left) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("bench objects still in " + namespace + " after " + timeout);
      }
      Thread.sleep(500);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
