package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Small runs of the whole harness against the real control plane and the engine jar: every phase runs and what it
 * reports is what happened (the engine's requests as the API server audited them, the children it made); timings
 * are never checked.
 */
@LocalKubernetes
class LoadHarnessIT {

  private static final int PARENTS = 12;
  private static final int CHILDREN = 2;
  /** Shared ConfigMaps the parents relate to, in the run of every phase. */
  private static final int SHARED = 2;
  private static final String STATUS_WRITES = "patch loadparents.bench.metareactor.dev/status";

  /**
   * Every phase, with the scenarios' options on the same small run: a resync period, and every parent related to
   * one of {@code SHARED} shared ConfigMaps through the customize hook (the fan-out).
   */
  @Test
  void measuresAnEngineThroughEveryPhase(LocalCluster cluster, @TempDir Path out) throws Exception {
    Map<String, JsonNode> phases = run(cluster, out, "composite", "--idle", "3s", "--trickle", "3s",
        "--trickle-rate", "4", "--resync", "1", "--related", Integer.toString(SHARED));
    assertThat(phases).containsOnlyKeys("converge", "update", "idle", "latency", "fanout", "restart");

    JsonNode converge = phases.get("converge");
    assertThat(converge.path("seconds").asDouble()).isPositive();
    assertThat(converge.path("engineCpuSeconds").asDouble()).isPositive();
    assertThat(converge.path("engineRssBytes").asLong()).isGreaterThan(10L << 20);
    assertThat(converge.path("hookCalls").asLong()).isGreaterThanOrEqualTo(PARENTS);
    // Counted by the API server's audit log, so exactly what the engine did: every child created once (a refused
    // create would be counted apart, under its status code), every status written.
    JsonNode requests = converge.path("requests");
    assertThat(requests.path("create configmaps").asLong()).isEqualTo(PARENTS * CHILDREN);
    assertThat(requests.path(STATUS_WRITES).asLong()).isGreaterThanOrEqualTo(PARENTS);
    assertThat(requests.path("list loadparents.bench.metareactor.dev").asLong()).isEqualTo(1);
    // The update wave rewrites every child and status in place.
    assertThat(phases.get("update").path("requests").path("update configmaps").asLong())
        .isEqualTo(PARENTS * CHILDREN);
    // Nothing changes while idle, and a converged engine costs the API server nothing, though the controller's
    // resync period (1 s) has every parent synced again within the 3 s.
    assertThat(phases.get("idle").path("requests").size()).isZero();
    assertThat(phases.get("idle").path("hookCalls").asLong()).isGreaterThanOrEqualTo(PARENTS);
    // The trickle's edits reached the hook, each timed; and each was seen converged (the parent's status and its
    // children showing it, or a later edit of the same parent).
    JsonNode latency = phases.get("latency").path("extra");
    assertThat(latency.path("latencyCount").asDouble()).isPositive();
    assertThat(latency.path("latencyP50Ms").asDouble()).isPositive();
    assertThat(latency.path("convergedCount").asDouble()).isEqualTo(latency.path("edits").asDouble());
    assertThat(latency.path("convergedMaxMs").asDouble())
        .isGreaterThanOrEqualTo(latency.path("convergedP50Ms").asDouble()).isPositive();
    // The engine's queue by lane: every edit's sync came from the fresh lane, the resyncs (--resync 1) from the other.
    assertThat(latency.path("freshWaits").asDouble()).isPositive();
    assertThat(latency.path("backgroundWaits").asDouble()).isPositive();
    assertThat(latency.path("backgroundWaitP99Ms").asDouble()).isPositive();
    // Each shared ConfigMap's new value reached the parents relating to it (the hook copies it into the status and
    // every child): one in-place update of every child, one status write per parent at least.
    JsonNode fanOut = phases.get("fanout");
    assertThat(fanOut.path("extra").path("sharedEdits").asDouble()).isEqualTo(SHARED);
    assertThat(fanOut.path("extra").path("parentsPerShared").asDouble()).isEqualTo((double) PARENTS / SHARED);
    assertThat(fanOut.path("requests").path("update configmaps").asLong()).isEqualTo(PARENTS * CHILDREN);
    assertThat(fanOut.path("requests").path(STATUS_WRITES).asLong()).isGreaterThanOrEqualTo(PARENTS);
    // A restart syncs every parent again without writing anything.
    JsonNode restart = phases.get("restart");
    assertThat(restart.path("requests").path("create configmaps").asLong()).isZero();
    assertThat(restart.path("extra").path("readySeconds").asDouble()).isPositive();

    assertThat(Files.readString(out.resolve("summary.md"))).contains("metareactor", "converge from scratch",
        "edit to converged p99", "fan-out: shared ConfigMap edit to its parents converged");
    byte[] png = Files.readAllBytes(out.resolve("chart.png"));
    assertThat(png).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
  }

  /** The MapController variant: one parent, {@code PARENTS} inputs, {@code CHILDREN} outputs each. */
  @Test
  void measuresAMapControllerOverTheInputsOfOneParent(LocalCluster cluster, @TempDir Path out) throws Exception {
    Map<String, JsonNode> phases = run(cluster, out, "map", "--phases", "converge,update,idle", "--idle", "3s");
    assertThat(phases).containsOnlyKeys("converge", "update", "idle");

    // The hook saw every input at least once.
    JsonNode converge = phases.get("converge");
    assertThat(converge.path("hookCalls").asLong()).isGreaterThanOrEqualTo(PARENTS);
    // Every output created once; the one parent's status written, but not once per input (once per burst).
    JsonNode requests = converge.path("requests");
    assertThat(requests.path("create configmaps").asLong()).isEqualTo(PARENTS * CHILDREN);
    assertThat(requests.path(STATUS_WRITES).asLong()).isBetween(1L, (long) PARENTS - 1);
    // Inputs and outputs are both ConfigMaps: one informer for both, one for the parents.
    assertThat(requests.path("list configmaps").asLong()).isEqualTo(1);
    assertThat(requests.path("list loadparents.bench.metareactor.dev").asLong()).isEqualTo(1);
    // Editing every input rewrites every output in place, and the counts in the status stay as they were.
    JsonNode update = phases.get("update").path("requests");
    assertThat(update.path("update configmaps").asLong()).isEqualTo(PARENTS * CHILDREN);
    assertThat(update.path(STATUS_WRITES).asLong()).isZero();
    assertThat(phases.get("idle").path("requests").size()).isZero();

    assertThat(Files.readString(out.resolve("summary.md"))).contains("### " + PARENTS + " inputs",
        "hook calls per input");
  }

  /**
   * The CEL variant ({@code --hook cel}): the engine answers the sync itself with {@link CelSync}, and with
   * {@code --shadow} the Go hook answers every sync beside it, compared by the engine: none differs, so the CEL
   * expression answers what the Go webhook answers.
   */
  @Test
  void measuresAnEngineWhoseSyncHookIsTheGoHooksAnswerInCel(LocalCluster cluster, @TempDir Path out)
      throws Exception {
    Map<String, JsonNode> phases = run(cluster, out, "composite", "--hook", "cel", "--shadow", "--phases",
        "converge,update");
    assertThat(phases).containsOnlyKeys("converge", "update");

    JsonNode converge = phases.get("converge");
    assertThat(converge.path("requests").path("create configmaps").asLong()).isEqualTo(PARENTS * CHILDREN);
    assertThat(phases.get("update").path("requests").path("update configmaps").asLong())
        .isEqualTo(PARENTS * CHILDREN);
    for (JsonNode phase : phases.values()) {
      assertThat(phase.path("extra").path("shadowDiffers").asDouble()).as("answers the Go hook gave otherwise")
          .isZero();
    }
    assertThat(phases.get("update").path("extra").path("shadowSame").asDouble()).as("answers the Go hook gave alike")
        .isGreaterThanOrEqualTo(2 * PARENTS);
    assertThat(Files.readString(out.resolve("summary.md"))).contains("metareactor-cel",
        "converge: engine + hook CPU per parent (ms)", "update: engine + hook CPU per parent, until quiet (ms)");
  }

  /** Runs the harness on the engine's launcher at {@code PARENTS} and {@code CHILDREN}; its phases, by name. */
  private static Map<String, JsonNode> run(LocalCluster cluster, Path out, String controller, String... options) {
    Path repository = cluster.controlPlane().repoRoot();
    // The launcher users run, with the JVM settings it ships (engine/src/main/jvm/jvm.options).
    Path launcher = repository.resolve("engine/bin/metareactor");
    List<String> args = new ArrayList<>(List.of("--engine", "metareactor=" + launcher, "--controller", controller,
        "--parents", Integer.toString(PARENTS), "--children", Integer.toString(CHILDREN), "--runs", "1",
        "--no-ceiling", "--namespace", cluster.namespace(), "--repository", repository.toString(),
        "--state", cluster.kubeconfig().getParent().toString(), "--out", out.toString()));
    args.addAll(List.of(options));
    int exit = new CommandLine(new LoadHarness()).execute(args.toArray(String[]::new));
    assertThat(exit).isZero();

    JsonNode results = JsonMapper.builder().build().readTree(out.resolve("results.json").toFile());
    JsonNode run = results.path("runs").get(0);
    assertThat(run.path("error").isNull()).isTrue();
    Map<String, JsonNode> phases = new TreeMap<>();
    run.path("phases").forEach(phase -> phases.put(phase.path("phase").asString(), phase));
    return phases;
  }
}
