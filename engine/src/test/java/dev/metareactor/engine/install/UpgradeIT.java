package dev.metareactor.engine.install;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static dev.metareactor.engine.it.Install.NAMESPACE;
import static dev.metareactor.engine.it.Install.kubectl;
import static dev.metareactor.engine.it.Install.kustomization;
import static dev.metareactor.engine.it.Install.uninstallAllButCrds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.faults.FaultLoad;
import dev.metareactor.engine.faults.Invariants;
import dev.metareactor.engine.it.ContainerImage;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.HostPorts;
import dev.metareactor.engine.it.ImagePod;
import dev.metareactor.engine.it.Install;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The compatibility promise of docs/install.md ("Upgrade from Metacontroller"), shown: an install of upstream
 * Metacontroller made with its own manifests ({@code ../shared/upstream/v4.17.2/manifests/production}) and converged by
 * its own binary ({@code ../shared/upstream/metacontroller}), then {@code kubectl apply -k manifests/production} over
 * it and the engine started from the image as the applied StatefulSet's pod: every parent and child upstream made is
 * left as it was (the same UIDs: nothing re-created; the same resourceVersions: nothing written), and the engine
 * converges what upstream could not run (a MapController).
 */
@LocalKubernetes
@ExtendWith(HostPorts.class)
class UpgradeIT {

  /** Parents upstream converges at its own API rate (client-go's 5 requests per second). */
  private static final int LOAD = 10;
  /** {@code kind/name=uid/resourceVersion}, a line per object. */
  private static final String VERSIONS = "jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.uid}/"
      + "{.metadata.resourceVersion}{\"\\n\"}{end}";

  @Test
  void upstreamsInstallTakesOursInPlaceWithoutRecreatingOrWritingAnything(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    Path upstream = Install.upstreamOrSkip(cluster);
    ContainerImage image = ContainerImage.unpacked(cluster.controlPlane().repoRoot());
    try (FaultLoad load = new FaultLoad(cluster, LOAD)) {
      kubectl(cluster, "apply", "-k", upstream.resolve(Install.UPSTREAM_RELEASE + "/manifests/production").toString());
      load.createControllers();
      load.createObjects("one");
      Invariants invariants = new Invariants(load);

      // Upstream's binary with its StatefulSet's arguments, as its ServiceAccount (a token in a kubeconfig: the
      // binary reads the in-cluster token only from the kubelet's path).
      JsonNode container = KubeJson.mapper().readTree(kubectl(cluster, "get", "statefulset", "metacontroller", "-o",
          "json")).path("spec").path("template").path("spec").path("containers").get(0);
      List<String> command = new ArrayList<>(List.of(upstream.resolve("metacontroller").toString(),
          "--kubeconfig=" + serviceAccountKubeconfig(cluster, dir)));
      container.path("args").forEach(arg -> command.add(arg.asString()));
      Process metacontroller = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(dir.resolve("metacontroller.log").toFile()).start();
      try {
        // Everything but the MapController's outputs, which upstream has no controller for.
        await().atMost(TIMEOUT).pollInterval(Duration.ofSeconds(1)).until(() -> invariants.violations(9999, 8081)
            .stream().filter(violation -> !violation.endsWith("inputs mapped")).toList(), List::isEmpty);
      } finally {
        metacontroller.destroy();
      }
      assertThat(metacontroller.waitFor()).as("upstream's exit on SIGTERM").isZero();
      // Stopped, upstream cancels the syncs it has in flight and records a SyncError ("Sync error: context canceled")
      // for each: those Events are upstream's, and the engine must converge the load without one of its own.
      cluster.kubectl("delete", "events", "--all").orThrow();
      Map<String, String> upstreamMade = versions(cluster, load);
      assertThat(upstreamMade).hasSize(LOAD * 4);

      kubectl(cluster, "apply", "-k", kustomization(cluster, "production").toString());
      try (ImagePod pod = ImagePod.ofStatefulSet(cluster, image, NAMESPACE, "metacontroller");
          ImagePod.Container engine = pod.start(dir.resolve("engine.log"))) {
        assertThat(pod.container().has("command")).as("upstream's command, dropped by the apply").isFalse();
        engine.await("the load converged", () -> invariants.violations(pod.metricsPort(), pod.probePort()),
            List::isEmpty);
        assertThat(versions(cluster, load)).as("kind/name=uid/resourceVersion of upstream's parents and children, "
            + "after the engine converged").isEqualTo(upstreamMade);
        assertThat(pod.stop(engine)).as("exit code on SIGTERM; the log:%n%s", engine.output()).isZero();
      }
    } finally {
      uninstallAllButCrds(cluster);
      EngineUnderTest.reinstallCrds(cluster);
    }
  }

  /** {@code kind/name=uid/resourceVersion} of the load's parents and of their children. */
  private static Map<String, String> versions(LocalCluster cluster, FaultLoad load) {
    Map<String, String> versions = new TreeMap<>();
    String lines = cluster.kubectl("get", "loads." + load.parentGroup() + ",configmaps", "-o", VERSIONS).orThrow();
    for (String line : lines.strip().split("\n")) {
      if (line.matches("(Load/load-\\d+|ConfigMap/load-\\d+-\\d+)=.*")) {
        versions.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
      }
    }
    return versions;
  }

  /** A kubeconfig with a token of the install's ServiceAccount, the API server's address and the cluster's CA. */
  private static Path serviceAccountKubeconfig(LocalCluster cluster, Path dir) throws Exception {
    String token = kubectl(cluster, "create", "token", "metacontroller", "--duration=1h").strip();
    var configuration = cluster.client().getConfiguration();
    Path kubeconfig = dir.resolve("metacontroller.kubeconfig");
    Files.writeString(kubeconfig, """
        apiVersion: v1
        kind: Config
        clusters:
        - name: local
          cluster: {server: "%s", certificate-authority-data: "%s"}
        users:
        - name: metacontroller
          user: {token: "%s"}
        contexts:
        - name: metacontroller
          context: {cluster: local, user: metacontroller}
        current-context: metacontroller
        """.formatted(configuration.getMasterUrl(), configuration.getCaCertData(), token));
    return kubeconfig;
  }
}
