package dev.metareactor.engine.install;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static dev.metareactor.engine.it.Install.NAMESPACE;
import static dev.metareactor.engine.it.Install.helm;
import static dev.metareactor.engine.it.Install.kubectl;
import static dev.metareactor.engine.it.Install.kubectlWithInput;
import static dev.metareactor.engine.it.Install.kustomization;
import static dev.metareactor.engine.it.Install.uninstallAllButCrds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.faults.FaultLoad;
import dev.metareactor.engine.faults.Invariants;
import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.HostPorts;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The install as users run it ({@code kubectl apply -k manifests/...}) on the real API server, and the engine run in a
 * pod's place: with exactly the StatefulSet's arguments, the in-cluster configuration of the manifest's
 * ServiceAccount (a token from {@code kubectl create token} in a service-account directory, nothing else), hosting a
 * CompositeController, a DecoratorController and a MapController to convergence without a {@code Forbidden}, and
 * serving the probes and metrics on the ports the manifest names.
 *
 * <p>Deleting an install deletes Metacontroller's CRDs; the tests put them back for the tests that follow.
 */
@LocalKubernetes
@ExtendWith(HostPorts.class)
class ManifestsIT {

  private static final List<String> KUSTOMIZATIONS = List.of("production", "dev", "dev-ssa", "debug", "ha", "sharded");
  /** Parents of the fault suite's load the installed engine must converge. */
  private static final int LOAD = 20;

  /** Output of {@code kubectl get}: {@code kind/name=resourceVersion} of each object, a line each. */
  private static final String VERSIONS =
      "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{\"\\n\"}{end}";

  /** {@code kind/name=resourceVersion} of every object the kustomization in {@code dir} installs. */
  private static String versions(LocalCluster cluster, String dir) {
    return kubectl(cluster, "get", "-k", dir, "-o", VERSIONS);
  }

  private static void deleteInstall(LocalCluster cluster, String name) {
    // A request for each custom resource first: an update of a CRD (the apply) drops its storage until the next
    // request for it, and a CRD deleted before that waits minutes for its cleanup ("could not list instances:
    // storage is (re)initializing").
    await().atMost(TIMEOUT).until(() -> cluster.kubectl("get", "--all-namespaces",
        "compositecontrollers.metacontroller.k8s.io,decoratorcontrollers.metacontroller.k8s.io,"
            + "mapcontrollers.metacontroller.k8s.io,controllerrevisions.metacontroller.k8s.io").succeeded());
    kubectl(cluster, "delete", "-k", kustomization(cluster, name).toString(), "--ignore-not-found", "--timeout=120s");
    await().atMost(TIMEOUT).until(() -> cluster.client().namespaces().withName(NAMESPACE).get() == null);
    // Gone, not just terminating: CRDs applied again while their instances are still being removed would go too.
    await().atMost(TIMEOUT).until(() -> cluster.client().apiextensions().v1().customResourceDefinitions().list()
        .getItems().stream().noneMatch(crd -> crd.getSpec().getGroup().equals("metacontroller.k8s.io")));
  }

  /**
   * Each kustomization over the one before (production, then the changes of dev, dev-ssa and ha to it): applied, and
   * applied again without a change; then ha's delete removes everything, the CRDs included. (One uninstall: CRDs
   * deleted and created again within seconds can keep the API server's cleanup of the next deletion waiting for
   * minutes.)
   */
  @Test
  void everyKustomizationInstallsChangesNothingWhenAppliedAgainAndUninstallsCompletely(LocalCluster cluster) {
    try {
      for (String name : KUSTOMIZATIONS) {
        String dir = kustomization(cluster, name).toString();
        kubectl(cluster, "apply", "-k", dir);
        assertThat(cluster.client().apps().statefulSets().inNamespace(NAMESPACE).withName("metacontroller").get())
            .as("the engine's StatefulSet of %s", name).isNotNull();

        String before = versions(cluster, dir);
        kubectl(cluster, "apply", "-k", dir);
        // By what the server stored, not kubectl's words: it reports a PodDisruptionBudget "configured" on every
        // apply (it always sends the selector, whose patch strategy is replace), though nothing changes.
        assertThat(versions(cluster, dir)).as("kind/name=resourceVersion of each object after a second apply of %s",
            name).isEqualTo(before);
      }
      deleteInstall(cluster, "ha");
      for (String name : KUSTOMIZATIONS) {
        assertThat(kubectl(cluster, "get", "-k", kustomization(cluster, name).toString(), "--ignore-not-found",
            "-o", "name")).as("what %s installed, after delete -k manifests/ha", name).isBlank();
      }
    } finally {
      EngineUnderTest.reinstallCrds(cluster);
    }
  }

  @Test
  void theEngineRunsWithTheStatefulSetsArgsAsItsServiceAccountAndHostsEveryKind(LocalCluster cluster,
      @TempDir Path dir) throws Exception {
    try (FaultLoad load = new FaultLoad(cluster, LOAD)) {
      // The HA install: the production StatefulSet's arguments plus --leader-election.
      kubectl(cluster, "apply", "-k", kustomization(cluster, "ha").toString());
      assertTheEngineHostsEveryKindAsThePodWould(cluster, dir, load);
    } finally {
      uninstallAllButCrds(cluster);
    }
  }

  /**
   * The chart, rendered by Helm built from the Go module proxy ({@code hack/helm.sh}) and applied: it lints, a
   * second apply changes nothing, and with its RBAC narrowed ({@code rbac.allResources=false}: a role aggregated from
   * the engine's own needs and {@code rbac.rules}, here the test's types) the engine still hosts every kind without
   * a Forbidden.
   */
  @Test
  void theHelmChartInstallsTheSameEngineAndItsNarrowedRoleIsEnough(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    FaultLoad load = new FaultLoad(cluster, LOAD);
    String chart = cluster.controlPlane().repoRoot().resolve("manifests/helm/metareactor").toString();
    helm(cluster, "lint", chart);
    String rules = KubeJson.mapper().writeValueAsString(List.of(
        Map.of("apiGroups", List.of(""), "resources", List.of("configmaps"), "verbs", List.of("*")),
        Map.of("apiGroups", List.of(load.parentGroup(), load.mapperGroup()), "resources", List.of("*"),
            "verbs", List.of("*"))));
    String rendered = helm(cluster, "template", "metareactor", chart, "--namespace", NAMESPACE,
        "--set", "leaderElection.enabled=true", "--set", "rbac.allResources=false", "--set-json",
        "rbac.rules=" + rules);
    try {
      kubectl(cluster, "create", "namespace", NAMESPACE);
      kubectlWithInput(cluster, rendered, "apply", "-f", "-");
      // The narrowed role aggregates the engine's own role and the rules given (kube-controller-manager fills it).
      await().atMost(TIMEOUT).until(() -> kubectl(cluster, "get", "clusterrole", "metacontroller", "-o",
          "jsonpath={.rules[*].resources}"), resources -> resources.contains("leases") && resources.contains("events")
          && resources.contains("configmaps"));
      assertThat(kubectl(cluster, "get", "clusterrole", "metacontroller", "-o", "jsonpath={.rules[*].apiGroups}"))
          .as("the narrowed role's API groups: no wildcard").doesNotContain("\"*\"");
      String before = kubectlWithInput(cluster, rendered, "get", "-f", "-", "-o", VERSIONS);
      kubectlWithInput(cluster, rendered, "apply", "-f", "-");
      assertThat(kubectlWithInput(cluster, rendered, "get", "-f", "-", "-o", VERSIONS))
          .as("kind/name=resourceVersion of each object after a second apply of the chart").isEqualTo(before);

      assertTheEngineHostsEveryKindAsThePodWould(cluster, dir, load);
    } finally {
      load.close();
      uninstallAllButCrds(cluster);
    }
  }

  /**
   * Starts the jar as the installed StatefulSet's pod would run: its exact arguments, configured in-cluster from a
   * service-account directory with a token of the installed ServiceAccount; then checks that it hosts the fault
   * suite's load (a CompositeController, a DecoratorController and a MapController) until every one of its
   * {@link Invariants} holds, with no Forbidden in its log, the leader lease in the service account's namespace, and
   * the probes and metrics on the StatefulSet's ports.
   */
  private static void assertTheEngineHostsEveryKindAsThePodWould(LocalCluster cluster, Path dir, FaultLoad load)
      throws Exception {
    KubernetesClient client = cluster.client();
    String[] args = KubeJson.mapper().readValue(kubectl(cluster, "get", "statefulset", "metacontroller", "-o",
        "jsonpath={.spec.template.spec.containers[0].args}"), String[].class);
    Map<String, Integer> ports = containerPorts(cluster);
    Path serviceAccount = serviceAccountDirectory(cluster, dir.resolve("serviceaccount"));
    URI server = URI.create(client.getConfiguration().getMasterUrl());
    Map<String, String> pod = Map.of(
        "KUBERNETES_SERVICE_HOST", server.getHost(),
        "KUBERNETES_SERVICE_PORT", Integer.toString(server.getPort()),
        KubeConfig.SERVICE_ACCOUNT_DIR_ENV, serviceAccount.toString(),
        "KUBECONFIG", dir.resolve("no-such-kubeconfig").toString());
    load.createControllers();
    load.createObjects("one");

    try (EngineProcess engine = EngineProcess.start(dir.resolve("engine.log"), pod, args)) {
      int probes = ports.get("probes");
      int metrics = ports.get("metrics");
      Invariants invariants = new Invariants(load);
      await().atMost(TIMEOUT).pollInterval(Duration.ofSeconds(1))
          .until(() -> invariants.violations(metrics, probes), List::isEmpty);

      HttpClient http = HttpClient.newHttpClient();
      assertThat(get(http, probes, "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(http, probes, "/readyz").statusCode()).isEqualTo(200);
      HttpResponse<String> scraped = get(http, metrics, "/metrics");
      assertThat(scraped.statusCode()).isEqualTo(200);
      assertThat(scraped.body()).contains("metareactor_");
      Lease lease = client.leases().inNamespace(NAMESPACE).withName("metacontroller").get();
      assertThat(lease).as("the lease, in the service account's namespace").isNotNull();
      assertThat(lease.getSpec().getHolderIdentity()).isNotBlank();

      assertThat(engine.output()).as("the engine's log").doesNotContain("Forbidden").doesNotContain("forbidden")
          .contains("Started CompositeController", "Started DecoratorController", "Started MapController");
    }
  }

  /** The ports the StatefulSet's container names, by name. */
  private static Map<String, Integer> containerPorts(LocalCluster cluster) {
    String names = kubectl(cluster, "get", "statefulset", "metacontroller", "-o",
        "jsonpath={range .spec.template.spec.containers[0].ports[*]}{.name}={.containerPort} {end}");
    Map<String, Integer> ports = new HashMap<>();
    for (String port : names.trim().split(" ")) {
      ports.put(port.substring(0, port.indexOf('=')), Integer.parseInt(port.substring(port.indexOf('=') + 1)));
    }
    String probePort = kubectl(cluster, "get", "statefulset", "metacontroller", "-o",
        "jsonpath={.spec.template.spec.containers[0].readinessProbe.httpGet.port}"
            + "/{.spec.template.spec.containers[0].livenessProbe.httpGet.port}");
    assertThat(probePort).as("both probes use the probes port").isEqualTo("probes/probes");
    return ports;
  }

  /** What the kubelet mounts for the pod: a token of the manifest's ServiceAccount, the cluster's CA, the namespace. */
  private static Path serviceAccountDirectory(LocalCluster cluster, Path dir) throws Exception {
    Files.createDirectories(dir);
    String token = kubectl(cluster, "create", "token", "metacontroller", "--duration=1h");
    Files.writeString(dir.resolve("token"), token.strip());
    Files.write(dir.resolve("ca.crt"),
        Base64.getDecoder().decode(cluster.client().getConfiguration().getCaCertData()));
    Files.writeString(dir.resolve("namespace"), NAMESPACE);
    return dir;
  }

  private static HttpResponse<String> get(HttpClient http, int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }
}
