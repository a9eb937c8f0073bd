package dev.metareactor.engine.install;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The examples' own end-to-end scripts, run as a user runs them: each example's {@code test.sh} against the local
 * control plane, with an engine in this JVM hosting every controller (the script creates its controller with
 * kubectl, unlabelled); hello-world's once with the Python hook and once with the Java one. Every script runs under
 * both apply strategies, as Metacontroller's CI runs its examples against its {@code dev} and {@code dev-ssa}
 * manifests.
 *
 * <p>Under one strategy the scripts run side by side, each in a namespace of its own, against one engine: most of
 * a script's time is waiting (for the garbage collector to learn a new CRD, for a snapshot interval, for a rollout),
 * which the others fill. The scripts run in lanes, one after another within a lane: the two hello-world runs, which
 * install the same CRD and controller, and the short scripts after the long ones, so that no more run at once than
 * two cores keep up with. Global-config-map copies its ConfigMap into every namespace, the other scripts' too; none
 * of them reads ConfigMaps of that name.
 */
@LocalKubernetes
class ExamplesIT {
  private static final Logger LOG = LoggerFactory.getLogger(ExamplesIT.class);

  /** The script's own waits are bounded (60 s each, 120 s for garbage collection); this only catches a hang. */
  private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(6);

  /**
   * An example: its directory under {@code examples/}, and what its script creates cluster-wide, deleted here when
   * the script cannot clean up after itself: its controllers (of one kind) and CRDs.
   */
  private record Example(String name, String controllerResource, List<String> controllers, List<String> crds) {

    /** An example with one CompositeController, named as the example, and one CRD. */
    static Example composite(String name, String crd) {
      return new Example(name, "compositecontroller", List.of(name), List.of(crd));
    }
  }

  private static final Example HELLO_WORLD = Example.composite("hello-world", "hellos.examples.metareactor.dev");
  private static final Example HELLO_WORLD_CEL = Example.composite("hello-world-cel",
      "celhellos.examples.metareactor.dev");
  private static final Example SNAPSHOT_SCHEDULE = new Example("snapshot-schedule", "mapcontroller",
      List.of("snapshot-schedule"), List.of("snapshotschedules.snapshots.examples.metareactor.dev",
          "snapshots.snapshots.examples.metareactor.dev"));
  private static final Example CONFIGMAP_DIGEST = new Example("configmap-digest", "mapcontroller",
      List.of("configmap-digest"), List.of("configmapdigests.examples.metareactor.dev"));
  private static final Example CATSET = Example.composite("catset", "catsets.examples.metareactor.dev");
  private static final Example BLUEGREEN = Example.composite("bluegreen",
      "bluegreendeployments.examples.metareactor.dev");
  private static final Example INDEXEDJOB = Example.composite("indexedjob", "indexedjobs.examples.metareactor.dev");
  private static final Example DAEMONJOB = Example.composite("daemonjob", "daemonjobs.examples.metareactor.dev");
  private static final Example SERVICE_PER_POD = new Example("service-per-pod", "decoratorcontroller",
      List.of("service-per-pod", "pod-name-label"), List.of());
  private static final Example CLUSTEREDPARENT = new Example("clusteredparent", "decoratorcontroller",
      List.of("clusteredparent"), List.of());
  private static final Example CRD_ROLES = new Example("crd-roles", "decoratorcontroller", List.of("crd-roles"),
      List.of("gadgets.crdroles.examples.metareactor.dev"));
  private static final Example CONFIGMAP_PROPAGATION = Example.composite("configmap-propagation",
      "configmappropagations.examples.metareactor.dev");
  private static final Example CONFIGMAP_PROPAGATION_CEL = Example.composite("configmap-propagation-cel",
      "celconfigmappropagations.examples.metareactor.dev");
  private static final Example SECRET_PROPAGATION = Example.composite("secret-propagation",
      "secretpropagations.examples.metareactor.dev");
  private static final Example GLOBAL_CONFIG_MAP = Example.composite("global-config-map",
      "globalconfigmaps.examples.metareactor.dev");
  private static final Example NAMESPACE_LIST = Example.composite("namespace-list",
      "namespacelists.examples.metareactor.dev");
  private static final Example CONFIGMAP_LIST = Example.composite("configmap-list",
      "configmaplists.examples.metareactor.dev");

  /**
   * One run of a script: the example, a name for it and the extra environment it runs with. Hello-world with the
   * Python hook (its default) and with the Java one; MapControllers: Snapshots of the selected PVCs, one per
   * interval, a deleted PVC's kept until their TTL (snapshot-schedule), a digest ConfigMap of each selected ConfigMap,
   * a deleted one's kept while its parent says so (configmap-digest); a StatefulSet-like parent, ordered start and a
   * rolling update of its Pods one at a time, RollingRecreate (catset); two ReplicaSets and a Service, a new template
   * on the idle color, the Service switched once it is ready (bluegreen); hello-world's sync hook as a CEL
   * expression, no hook server (hello-world-cel); numbered Pods, parallelism and a failed Pod replaced (indexedjob);
   * a DaemonSet deleted once its status says every node is done (daemonjob);
   * DecoratorControllers with a finalize hook, opt-out and opt-in (service-per-pod), a cluster-scoped target with a
   * namespaced attachment (clusteredparent), CRDs decorated with ClusterRoles (crd-roles); customize hooks of
   * cluster-scoped parents copying into listed namespaces, namespaces by label and every namespace
   * (configmap-propagation, secret-propagation, global-config-map), the first with its customize and sync hooks as
   * CEL expressions (configmap-propagation-cel); v2 customize hooks of namespaced parents reading Namespaces and
   * another namespace's ConfigMaps (namespace-list, configmap-list).
   */
  private record Run(Example example, String name, Map<String, String> env) {

    Run(Example example) {
      this(example, example.name(), Map.of());
    }
  }

  private LocalCluster cluster;
  private EngineUnderTest engine;
  private Path repo;

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.repo = cluster.controlPlane().repoRoot();
  }

  @AfterEach
  void closeEngine() {
    if (engine != null) {
      engine.close();
    }
  }

  /**
   * Starts an engine with {@code --apply-strategy=<strategy>} and runs every example's script, the lanes side by side
   * and the scripts of a lane one after the other; each must exit 0 and say it passed, its output shown if not.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(ApplyStrategy.class)
  void everyExampleScriptPasses(ApplyStrategy strategy, @TempDir Path dir) throws Exception {
    Path jar = repo.resolve("examples/hello-world-java/target/hello-hook.jar");
    assertThat(jar).as("built by examples/hello-world-java, which the reactor builds before engine").exists();
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    // The short scripts follow the long ones, so that every lane takes about as long (measured per script, the
    // strategy's run ends with its slowest lane) and no more run at once than the two cores keep up with.
    List<List<Run>> lanes = List.of(
        List.of(new Run(HELLO_WORLD, "hello-world-python", Map.of()),
            new Run(HELLO_WORLD, "hello-world-java", Map.of("HOOK_CMD", java + " -jar " + jar)),
            new Run(NAMESPACE_LIST)),
        List.of(new Run(SNAPSHOT_SCHEDULE), new Run(CONFIGMAP_LIST), new Run(CONFIGMAP_PROPAGATION_CEL)),
        List.of(new Run(CATSET), new Run(CLUSTEREDPARENT), new Run(HELLO_WORLD_CEL)),
        List.of(new Run(BLUEGREEN), new Run(CRD_ROLES), new Run(GLOBAL_CONFIG_MAP)),
        List.of(new Run(INDEXEDJOB), new Run(SERVICE_PER_POD)),
        List.of(new Run(DAEMONJOB), new Run(CONFIGMAP_PROPAGATION), new Run(SECRET_PROPAGATION),
            new Run(CONFIGMAP_DIGEST)));
    engine = EngineUnderTest.startHostingAll(cluster, "--apply-strategy=" + strategy.flagValue());
    ExecutorService pool = Executors.newFixedThreadPool(lanes.size());
    try {
      List<Future<Void>> done = new ArrayList<>();
      for (List<Run> lane : lanes) {
        done.add(pool.submit(() -> {
          for (Run run : lane) {
            runExampleTest(run, strategy, dir);
          }
          return null;
        }));
      }
      // Every lane to its end, so that each failed script is reported, the first with the others suppressed.
      AssertionError failed = null;
      for (Future<Void> lane : done) {
        try {
          lane.get();
        } catch (ExecutionException e) {
          AssertionError failure = e.getCause() instanceof AssertionError assertion ? assertion
              : new AssertionError("a script could not be run", e.getCause());
          if (failed == null) {
            failed = failure;
          } else {
            failed.addSuppressed(failure);
          }
        }
      }
      if (failed != null) {
        throw failed;
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Runs the script of {@code run} in a namespace of its own with the run's extra environment and the engine's
   * {@code strategy}, and asserts it exits 0, showing its output if not.
   */
  private void runExampleTest(Run run, ApplyStrategy strategy, Path dir) throws IOException, InterruptedException {
    Example example = run.example();
    String script = "examples/" + example.name() + "/test.sh";
    Path output = dir.resolve(run.name() + ".log");
    // Output to a file, not inherited: writing to the forked JVM's stdout would corrupt Failsafe's channel.
    ProcessBuilder builder = new ProcessBuilder("bash", repo.resolve(script).toString())
        .directory(repo.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectErrorStream(true)
        .redirectOutput(output.toFile());
    builder.environment().put("KUBECONFIG", cluster.kubeconfig().toString());
    builder.environment().put("KUBECTL", cluster.controlPlane().kubectlBinary().toString());
    builder.environment().put("NAMESPACE", cluster.createNamespace("examplesit-" + run.name()));
    // The scripts preview their controllers as the engine would sync them: with its strategy and its java.
    builder.environment().put("APPLY_STRATEGY", strategy.flagValue());
    builder.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    builder.environment().putAll(run.env());
    long start = System.nanoTime();
    Process process = builder.start();
    try {
      boolean exited = process.waitFor(SCRIPT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      String log = Files.readString(output, StandardCharsets.UTF_8);
      assertThat(exited).as("%s (%s) finished within %s; its output so far:%n%s", script, run.name(), SCRIPT_TIMEOUT,
          log).isTrue();
      assertThat(process.exitValue()).as("exit code of %s (%s); its output:%n%s", script, run.name(), log).isZero();
      assertThat(log).as("the output of %s (%s)", script, run.name()).contains(example.name() + " test: PASSED");
      // What a lane is made of, for whoever balances the lanes next.
      LOG.info("{} ({}, {}) passed in {} s", script, run.name(), strategy.flagValue(),
          TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
    } finally {
      stopScript(example, process);
    }
  }

  /**
   * SIGTERM first: the script's EXIT trap then stops its hook and deletes what it created. A script that ignores
   * it is killed with its whole tree, and its cluster-scoped objects are deleted here instead.
   */
  private void stopScript(Example example, Process script) throws InterruptedException {
    if (!script.isAlive()) {
      return;
    }
    List<ProcessHandle> tree = script.descendants().toList();
    script.destroy();
    if (script.waitFor(30, TimeUnit.SECONDS)) {
      return;
    }
    script.destroyForcibly();
    tree.forEach(ProcessHandle::destroyForcibly);
    for (String controller : example.controllers()) {
      cluster.kubectl("delete", example.controllerResource(), controller, "--ignore-not-found");
    }
    for (String crd : example.crds()) {
      cluster.kubectl("delete", "crd", crd, "--ignore-not-found", "--wait=false");
    }
  }
}
