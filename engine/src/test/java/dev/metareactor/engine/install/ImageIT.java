package dev.metareactor.engine.install;

import static dev.metareactor.engine.it.Install.NAMESPACE;
import static dev.metareactor.engine.it.Install.kubectl;
import static dev.metareactor.engine.it.Install.kustomization;
import static dev.metareactor.engine.it.Install.uninstallAllButCrds;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.faults.FaultLoad;
import dev.metareactor.engine.faults.Invariants;
import dev.metareactor.engine.it.ContainerImage;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.HostPorts;
import dev.metareactor.engine.it.ImagePod;
import dev.metareactor.engine.it.Install;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The image users deploy ({@code target/image}, built by the package phase with {@code image/build.sh}), run as the
 * pods of the install files describe it ({@link ImagePod}: bubblewrap, the pod's user, read-only root, its
 * {@code emptyDir}s, a service-account token, no kubeconfig): the production kustomization's pod, and upstream
 * Metacontroller's own production manifests with only the image replaced. Each must become ready, converge the fault
 * suite's load ({@link Invariants}: a CompositeController, a DecoratorController and a MapController), serve
 * {@code /metrics}, and exit 0 on SIGTERM within the pod's grace period.
 */
@LocalKubernetes
@ExtendWith(HostPorts.class)
class ImageIT {

  /** Parents of the fault suite's load each pod must converge. */
  private static final int LOAD = 20;

  private final HttpClient http = HttpClient.newHttpClient();

  /**
   * The image holds the engine as the repository builds and starts it: the entry point is the launcher
   * (engine/bin/metareactor, byte for byte) with the repository's jvm.options and the jar the build made, answering as
   * /usr/bin/metacontroller too; it runs as 65532:65532 and exposes the probes' and metrics' ports.
   */
  @Test
  void theImageStartsTheEngineAsTheLauncherDoesAsUid65532(LocalCluster cluster) throws Exception {
    Path repo = cluster.controlPlane().repoRoot();
    ContainerImage image = ContainerImage.unpacked(repo);
    assertThat(image.entrypoint()).containsExactly("/usr/bin/metareactor");
    assertThat(image.cmd()).isEmpty();
    assertThat(image.user()).isEqualTo("65532:65532");
    assertThat(image.config().path("ExposedPorts").propertyNames()).containsExactlyInAnyOrder("8081/tcp", "9999/tcp");
    assertThat(image.env()).containsEntry("METAREACTOR_JAR", "/app/metareactor.jar")
        .containsEntry("METAREACTOR_JVM_OPTIONS", "/etc/metareactor/jvm.options")
        .containsEntry("METAREACTOR_CDS", "off")
        .containsEntry("JAVA_HOME", "/usr/lib/jvm/java-17");

    Path rootfs = image.rootfs();
    assertThat(rootfs.resolve("usr/bin/metareactor")).hasSameBinaryContentAs(repo.resolve("engine/bin/metareactor"))
        .isExecutable();
    assertThat(Files.readSymbolicLink(rootfs.resolve("usr/bin/metacontroller"))).isEqualTo(Path.of("metareactor"));
    assertThat(rootfs.resolve("etc/metareactor/jvm.options"))
        .hasSameBinaryContentAs(repo.resolve("engine/src/main/jvm/jvm.options"));
    assertThat(rootfs.resolve("app/metareactor.jar")).hasSameBinaryContentAs(Path.of("target", "metareactor.jar"));
    assertThat(Files.readString(rootfs.resolve("usr/lib/jvm/java-17/release"))).contains("JAVA_VERSION=\"17.");
    assertThat(Files.readString(rootfs.resolve("etc/passwd"))).contains("nonroot:x:65532:65532:");
  }

  /**
   * manifests/production's pod: read-only root, /tmp an emptyDir, uid 65532. Its log has no warning, and it leaves
   * nothing behind in /tmp (Netty unpacks its native libraries there and removes them once loaded).
   */
  @Test
  void theProductionPodRunsTheImageConvergesAndStopsOnSigterm(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    ContainerImage image = ContainerImage.unpacked(cluster.controlPlane().repoRoot());
    try (FaultLoad load = new FaultLoad(cluster, LOAD)) {
      kubectl(cluster, "apply", "-k", kustomization(cluster, "production").toString());
      try (ImagePod pod = ImagePod.ofStatefulSet(cluster, image, NAMESPACE, "metacontroller")) {
        JsonNode security = pod.container().path("securityContext");
        assertThat(security.path("readOnlyRootFilesystem").asBoolean()).as("the manifest's read-only root").isTrue();
        load.createControllers();
        load.createObjects("one");

        try (ImagePod.Container container = pod.start(dir.resolve("engine.log"))) {
          convergesAndServes(pod, container, load);
          int testUid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
          assertThat(container.hostUid()).as("the engine's user on the host: the pod's when the test runs as root, "
              + "else the test's own (rootless)").isEqualTo(testUid == 0 ? 65532 : testUid);
          stopsOnSigterm(pod, container);
          assertThat(container.output()).as("the engine's log").contains("Started CompositeController",
              "Started DecoratorController", "Started MapController").doesNotContain("Forbidden")
              .doesNotContain("\"level\":\"warn\"").doesNotContain("\"level\":\"error\"");
        }
        try (Stream<Path> left = Files.list(pod.emptyDir("tmp"))) {
          assertThat(left).as("what the engine left in the emptyDir at /tmp").isEmpty();
        }
      }
    } finally {
      uninstallAllButCrds(cluster);
    }
  }

  /**
   * Upstream Metacontroller's production manifests ({@code ../shared/upstream/v4.17.2/manifests/production}, as
   * data), with only the image replaced: their pod runs {@code /usr/bin/metacontroller} with upstream's arguments, as
   * the image's user (upstream sets none), with a writable root and no volume.
   */
  @Test
  void upstreamsManifestsWithOnlyTheImageReplacedRunTheEngine(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    Path upstream = Install.upstreamOrSkip(cluster);
    ContainerImage image = ContainerImage.unpacked(cluster.controlPlane().repoRoot());
    Path overlay = Files.createDirectories(dir.resolve("upstream-with-our-image"));
    Files.writeString(overlay.resolve("kustomization.yaml"), """
        resources:
        - %s
        images:
        - name: ghcr.io/metacontroller/metacontroller
          newName: metareactor
          newTag: "%s"
        """.formatted(overlay.relativize(upstream.resolve(Install.UPSTREAM_RELEASE + "/manifests/production")),
        image.config().path("Labels").path("org.opencontainers.image.version").asString()));
    try (FaultLoad load = new FaultLoad(cluster, LOAD)) {
      kubectl(cluster, "apply", "-k", overlay.toString());
      try (ImagePod pod = ImagePod.ofStatefulSet(cluster, image, NAMESPACE, "metacontroller")) {
        assertThat(pod.container().path("command").get(0).asString()).isEqualTo("/usr/bin/metacontroller");
        assertThat(pod.container().path("image").asString()).startsWith("metareactor:");
        load.createControllers();
        load.createObjects("one");
        try (ImagePod.Container container = pod.start(dir.resolve("engine.log"))) {
          convergesAndServes(pod, container, load);
          stopsOnSigterm(pod, container);
        }
      }
    } finally {
      uninstallAllButCrds(cluster);
      EngineUnderTest.reinstallCrds(cluster);
    }
  }

  /**
   * manifests/debug, the equivalent of upstream's debug overlay (which runs Metacontroller under Delve on port 40000):
   * the same image with the JVM's debugger on port 40000 answering a debugger's handshake, and no probes; the engine
   * still becomes ready and stops on SIGTERM.
   */
  @Test
  void theDebugPodServesTheJvmDebuggerOnUpstreamsDelvePort(LocalCluster cluster, @TempDir Path dir) throws Exception {
    ContainerImage image = ContainerImage.unpacked(cluster.controlPlane().repoRoot());
    try {
      kubectl(cluster, "apply", "-k", kustomization(cluster, "debug").toString());
      try (ImagePod pod = ImagePod.ofStatefulSet(cluster, image, NAMESPACE, "metacontroller");
          ImagePod.Container container = pod.start(dir.resolve("engine.log"))) {
        assertThat(pod.container().has("readinessProbe")).isFalse();
        container.await("/readyz 200", () -> status(pod.probePort(), "/readyz"), code -> code == 200);
        assertTheJvmDebuggerAnswersOn(40000);
        stopsOnSigterm(pod, container);
      }
    } finally {
      uninstallAllButCrds(cluster);
    }
  }

  /**
   * The Helm chart given each of upstream's values files ({@code values.yaml} and {@code ci/*-values.yaml} of
   * upstream v4.17.2's chart, as data) with only the image replaced: it renders an install that applies, and the pod
   * it describes runs from the image: ready, {@code /metrics}, exit 0 on SIGTERM, and, with roles that grant it
   * (upstream's two {@code rbac-*} files grant only their own examples' types), the fault suite's load converged.
   * Upstream's debug values (Delve on port 40000) give the JVM's debugger on that port; its command-args values
   * ({@code --pprof-address=:6060}) a JDK Flight Recorder recording there.
   */
  @Test
  void theChartTakesUpstreamsValuesFilesAndEachInstallRuns(LocalCluster cluster, @TempDir Path dir) throws Exception {
    Path upstream = Install.upstreamOrSkip(cluster);
    ContainerImage image = ContainerImage.unpacked(cluster.controlPlane().repoRoot());
    Path upstreamChart = upstream.resolve(Install.UPSTREAM_RELEASE + "/helm/metacontroller");
    List<Path> valuesFiles = new ArrayList<>();
    try (Stream<Path> ci = Files.list(upstreamChart.resolve("ci"))) {
      // The narrowed roles first, before the load's controllers exist: their types are not in those roles.
      ci.sorted(Comparator.comparing((Path file) -> !file.getFileName().toString().startsWith("rbac-"))
          .thenComparing(Path::getFileName)).forEach(valuesFiles::add);
    }
    valuesFiles.add(upstreamChart.resolve("values.yaml"));
    String chart = cluster.controlPlane().repoRoot().resolve("manifests/helm/metareactor").toString();
    String version = image.config().path("Labels").path("org.opencontainers.image.version").asString();
    try (FaultLoad load = new FaultLoad(cluster, LOAD)) {
      kubectl(cluster, "create", "namespace", NAMESPACE);
      boolean loaded = false;
      for (Path values : valuesFiles) {
        String name = values.getFileName().toString();
        String rendered = Install.helm(cluster, "template", "metacontroller", chart, "--namespace", NAMESPACE, "-f",
            values.toString(), "--set", "image.repository=metareactor", "--set", "image.tag=" + version);
        Install.kubectlWithInput(cluster, rendered, "apply", "-f", "-");
        boolean narrowed = name.startsWith("rbac-");
        if (!narrowed && !loaded) {
          load.createControllers();
          load.createObjects("one");
          loaded = true;
        }
        try (ImagePod pod = ImagePod.ofStatefulSet(cluster, image, NAMESPACE, "metacontroller");
            ImagePod.Container container = pod.start(dir.resolve(name + ".log"))) {
          assertThePodIsWhatTheValuesSay(name, YAMLMapper.builder().build().readTree(values.toFile()), pod);
          if (narrowed) {
            container.await(name + ": /readyz 200", () -> status(pod.probePort(), "/readyz"), code -> code == 200);
            assertThat(get(pod.metricsPort(), "/metrics").body()).as(name).contains("jvm_memory_used_bytes");
          } else {
            convergesAndServes(pod, container, load);
          }
          if (name.equals("debug-values.yaml")) {
            assertThat(pod.container().has("command")).as("Delve's command, replaced by the JVM's").isFalse();
            assertTheJvmDebuggerAnswersOn(40000);
          }
          if (name.equals("command-args-values.yaml")) {
            HttpResponse<Path> recording = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:6060/debug/jfr?seconds=1")).build(),
                HttpResponse.BodyHandlers.ofFile(dir.resolve("recording.jfr")));
            assertThat(recording.statusCode()).as("--pprof-address=:6060: a recording").isEqualTo(200);
            assertThat(RecordingFile.readAllEvents(recording.body())).extracting(event -> event.getEventType()
                .getName()).as("the engine's recording").contains("jdk.JVMInformation");
          }
          assertThat(pod.stop(container)).as("%s: exit code on SIGTERM; the log:%n%s", name, container.output())
              .isZero();
        }
      }
    } finally {
      uninstallAllButCrds(cluster);
    }
  }

  /** Ready, the load converged, probes and metrics answered on the pod's ports. */
  private void convergesAndServes(ImagePod pod, ImagePod.Container container, FaultLoad load) throws Exception {
    Invariants invariants = new Invariants(load);
    container.await("the load converged", () -> invariants.violations(pod.metricsPort(), pod.probePort()),
        List::isEmpty);
    assertThat(status(pod.probePort(), "/healthz")).isEqualTo(200);
    HttpResponse<String> metrics = get(pod.metricsPort(), "/metrics");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body()).contains("metareactor_api_requests_total", "jvm_memory_used_bytes");
  }

  /**
   * The values upstream's chart puts in the pod, in the pod our chart made of them: the engine's flags (for Delve's
   * command, those after {@code --}), the command, the security contexts, the ServiceAccount.
   */
  private static void assertThePodIsWhatTheValuesSay(String name, JsonNode values, ImagePod pod) {
    List<String> flags = new ArrayList<>();
    values.path("commandArgs").forEach(flag -> flags.add(flag.asString()));
    boolean delve = values.path("command").asString("").endsWith("/dlv");
    if (delve) {
      flags.subList(0, flags.indexOf("--") + 1).clear();
    } else if (!values.path("command").asString("").isEmpty()) {
      assertThat(pod.container().path("command").path(0).asString("")).as(name).isEqualTo(values.path("command")
          .asString());
    }
    List<String> args = new ArrayList<>();
    pod.container().path("args").forEach(arg -> args.add(arg.asString()));
    assertThat(args).as("%s: the container's args", name).containsSubsequence(flags);
    JsonNode podSpec = pod.spec();
    values.path("podSecurityContext").properties().forEach(entry -> assertThat(podSpec.path("securityContext")
        .path(entry.getKey())).as("%s: podSecurityContext.%s", name, entry.getKey()).isEqualTo(entry.getValue()));
    values.path("securityContext").properties().forEach(entry -> assertThat(pod.container().path("securityContext")
        .path(entry.getKey())).as("%s: securityContext.%s", name, entry.getKey()).isEqualTo(entry.getValue()));
    assertThat(podSpec.path("serviceAccountName").asString()).as(name)
        .isEqualTo(values.path("serviceAccount").path("name").asString("").isEmpty() ? "metacontroller"
            : values.path("serviceAccount").path("name").asString());
  }

  /** A JVM debugger (JDWP) answers its handshake on {@code port}. */
  private static void assertTheJvmDebuggerAnswersOn(int port) throws Exception {
    try (Socket debugger = new Socket("127.0.0.1", port)) {
      byte[] handshake = "JDWP-Handshake".getBytes(StandardCharsets.US_ASCII);
      debugger.getOutputStream().write(handshake);
      assertThat(debugger.getInputStream().readNBytes(handshake.length)).as("the JVM debugger's handshake")
          .isEqualTo(handshake);
    }
  }

  /** SIGTERM to PID 1, as the kubelet stops a pod: exit 0 within the pod's grace period. */
  private static void stopsOnSigterm(ImagePod pod, ImagePod.Container container) throws InterruptedException {
    assertThat(pod.stop(container)).as("exit code within the grace period; the log:%n%s", container.output()).isZero();
  }

  private int status(int port, String path) throws Exception {
    return get(port, path).statusCode();
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }
}
