package dev.metareactor.load;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One engine, one size, one repetition, in phases that each start from what the previous one left:
 *
 * <ol>
 *   <li><b>preview</b> (an engine whose launcher has {@code metareactor preview}; upstream has nothing like it): the
 *       same fresh parents, no engine running; {@code metareactor preview --all} of the bench controller, until it
 *       has printed every parent's writes;</li>
 *   <li><b>converge</b>: {@code parents} bench parents exist, nothing else; the engine starts; until every parent
 *       has its status and its children;</li>
 *   <li><b>update</b>: every parent's spec is edited at once (a merge patch each, as fast as the API server takes
 *       them); until every child and status carries the new value;</li>
 *   <li><b>idle</b>: nothing changes for a while; what does the engine still spend?</li>
 *   <li><b>latency</b>: a steady trickle of edits to random parents, each stamped with its wall-clock time; the
 *       hook measures how long each edit took to reach it, the convergence watch how long until the parent's
 *       status and every child showed it;</li>
 *   <li><b>fanout</b> (with {@code --related K}: every parent relates to one of K shared ConfigMaps through the
 *       customize hook): each shared ConfigMap is edited in turn; until every parent relating to it shows its new
 *       value in its status and every child;</li>
 *   <li><b>restart</b>: the engine is stopped (SIGTERM) and started again over the converged cluster; until it is
 *       ready, and until it has synced (called the hook for) every parent.</li>
 * </ol>
 *
 * <p>For a MapController ({@link ControllerKind#MAP}) read "input" for "parent": {@code parents} input ConfigMaps
 * of one parent exist before the engine starts, and the edits go to the inputs.
 */
final class LoadRun {

  private static final Logger LOG = LoggerFactory.getLogger(LoadRun.class);
  private static final JsonMapper JSON = JsonMapper.builder().build();
  /** Metareactor's count of the syncs whose answer was compared with a shadow hook's, by result. */
  private static final String SHADOW_SYNCS = "metareactor_shadow_syncs_total";
  static final List<String> PHASES = List.of("preview", "converge", "update", "idle", "latency", "fanout", "restart");
  /** The value the update wave writes to every parent (or input); each run starts from freshly created ones. */
  private static final String UPDATED_VALUE = "v1";
  /** How many of the trickle's slowest edits the log names. */
  private static final int SLOWEST_LOGGED = 8;

  /**
   * Everything a run needs that does not change between runs.
   *
   * @param resyncSeconds the controller's {@code resyncPeriodSeconds}, 0 for none
   * @param related how many shared ConfigMaps the parents relate to through the customize hook, 0 for none
   */
  record Setup(Cluster cluster, Loadkit loadkit, Loadkit.Hook hook, ConvergenceWatch watch, String namespace,
      ControllerKind kind, int children, List<String> flags, List<String> phases, Duration idle, double trickleRate,
      Duration trickle, Duration timeout, boolean shadow, int resyncSeconds, int related) {}

  private final Setup setup;
  private final EngineProcess.Engine engine;
  private final EngineProcess.Sharding sharding;
  private final int parents;
  private final int repetition;
  private final Path dir;
  private final List<Results.Phase> phases = new ArrayList<>();
  private final List<ConvergenceWatch.Progress> progress = ConvergenceWatch.newSamples();

  /**
   * A run of {@code engine} (under its sync hook), as {@code sharding.replicas()} replicas with {@code --sharding}
   * (Metareactor's) or as one process ({@link EngineProcess.Sharding#NONE}).
   */
  LoadRun(Setup setup, EngineProcess.Engine engine, EngineProcess.Sharding sharding, int parents, int repetition,
      Path dir) {
    this.setup = setup;
    this.engine = engine;
    this.sharding = sharding;
    this.parents = parents;
    this.repetition = repetition;
    this.dir = dir;
  }

  Results.Run run() throws IOException, InterruptedException {
    Files.createDirectories(dir);
    String error = null;
    EngineProcess process = null;
    try {
      prepare();
      if (setup.phases().contains("preview") && previews()) {
        preview();
      }
      process = converge();
      if (setup.phases().contains("update")) {
        update(process);
      }
      if (setup.phases().contains("idle")) {
        idle(process);
      }
      if (setup.phases().contains("latency")) {
        latency(process);
      }
      if (setup.phases().contains("fanout") && setup.related() > 0) {
        fanOut(process);
      }
      if (setup.phases().contains("restart")) {
        process.stop(Duration.ofSeconds(30));
        process = restart();
      }
    } catch (RuntimeException e) {
      error = e.getMessage();
      LOG.error("{} at {} parents, run {}: {}", engine.name(), parents, repetition, e.getMessage());
    } finally {
      if (process != null) {
        process.stop(Duration.ofSeconds(30));
      }
      setup.cluster().deleteControllers();
    }
    return new Results.Run(engine.name(), parents, setup.children(), repetition, List.copyOf(phases),
        List.copyOf(progress), error);
  }

  /** Nothing but {@code parents} fresh parents (or inputs): no controller object, no children, no engine. */
  private void prepare() throws IOException, InterruptedException {
    setup.cluster().deleteControllers();
    setup.cluster().deleteBenchObjects(setup.namespace(), deleteTimeout(setup.timeout()));
    Loadkit.Result created = write("create", "--children=" + setup.children(), "--related=" + setup.related());
    LOG.info("{}: created {} {} in {} s", engine.name(), created.count(), setup.kind().units(),
        String.format("%.1f", created.seconds()));
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (setup.watch().parentsSeen() < parents || setup.watch().childrenSeen() > 0
        || setup.watch().relatedSeen() < setup.related()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the watch saw " + setup.watch().parentsSeen() + " " + setup.kind().units()
            + ", " + setup.watch().childrenSeen() + " children and " + setup.watch().relatedSeen()
            + " shared ConfigMaps, expected " + parents + ", 0 and " + setup.related());
      }
      Thread.sleep(50);
    }
    setup.cluster().putController(setup.kind().type(), controllerObject());
  }

  /** Whether the engine's command is Metareactor's launcher, which has the {@code preview} subcommand. */
  private boolean previews() {
    String program = engine.command().get(engine.command().size() - 1);
    return Path.of(program).getFileName().toString().equals("metareactor");
  }

  /**
   * {@code metareactor preview --all -o json} of the bench controller over the fresh parents, with the engine's
   * {@code --workers} as its concurrency: its wall time and CPU (user and system, from bash's {@code time}), and as
   * extras the parents it would change and the writes it lists.
   */
  private void preview() throws IOException, InterruptedException {
    Measurement m = begin();
    GenericKubernetesResource controller = controllerObject();
    String concurrency = setup.flags().stream().filter(flag -> flag.startsWith("--workers="))
        .map(flag -> flag.substring("--workers=".length())).findFirst().orElse("16");
    Path prefix = dir.resolve("preview");
    List<String> command = new ArrayList<>(List.of("bash", "-c",
        "TIMEFORMAT='%R %U %S'; { time \"$@\" >\"$0.json\" 2>\"$0.err\"; } 2>\"$0.time\"", prefix.toString()));
    command.addAll(engine.command());
    command.addAll(List.of("preview", "--kubeconfig", setup.cluster().engineKubeconfig().toString(), "--controller",
        controller.getKind().toLowerCase(Locale.ROOT) + "/" + controller.getMetadata().getName(), "--all",
        "-o", "json", "--concurrency", concurrency));
    // The engine's client rate, as the engine gets it.
    setup.flags().stream().filter(flag -> flag.startsWith("--client-go-qps=") || flag.startsWith("--client-go-burst="))
        .forEach(command::add);
    Process process = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new File(
        "/dev/null"))).start();
    if (!process.waitFor(setup.timeout().toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("metareactor preview did not end within " + setup.timeout());
    }
    String[] times = Files.readString(Path.of(prefix + ".time")).strip().split("\\s+");
    JsonNode summary = JSON.readTree(Path.of(prefix + ".json").toFile()).path("summary");
    if (process.exitValue() != 1 || summary.path("failed").asInt() > 0) {
      throw new IllegalStateException("metareactor preview exited " + process.exitValue() + " (1 expected: "
          + "every fresh parent would change); see " + prefix + ".err");
    }
    double writes = 0;
    for (JsonNode count : summary.path("writes")) {
      writes += count.asDouble();
    }
    Map<String, Double> extra = new LinkedHashMap<>();
    extra.put("wouldChange", summary.path("wouldChange").asDouble());
    extra.put("writes", writes);
    phases.add(m.endOneShot("preview", Double.parseDouble(times[0]),
        Double.parseDouble(times[1]) + Double.parseDouble(times[2]), extra));
    log("preview --all", Double.parseDouble(times[0]));
  }

  private EngineProcess converge() throws IOException, InterruptedException {
    Measurement m = begin();
    EngineProcess process = start("engine.log");
    Ready ready = Ready.watch(process, setup.timeout());
    double seconds = setup.watch().awaitConverged(parents, process.startedNanos(), setup.timeout(), progress,
        process::alive);
    Map<String, Double> extra = new LinkedHashMap<>();
    ready.seconds().ifPresent(s -> extra.put("readySeconds", s));
    putReplicas(process, extra);
    // Start-up is part of this phase: the CPU baseline is the process's start (zero).
    Results.Phase converge = m.end("converge", seconds, process, new ProcessTree.Sample(0, 0), extra);
    phases.add(converge);
    log("converge", seconds);
    putSettled(converge, process, 0, m.hookCpu);
    return process;
  }

  private void update(EngineProcess process) throws IOException, InterruptedException {
    Measurement m = begin(process);
    long start = System.nanoTime();
    setup.watch().expect(UPDATED_VALUE);
    try {
      Loadkit.Result edits = write("edit", "--value=" + UPDATED_VALUE);
      double seconds = setup.watch().awaitConverged(parents, start, setup.timeout(), null, process::alive);
      Map<String, Double> extra = new LinkedHashMap<>();
      extra.put("editSeconds", edits.seconds());
      putReplicas(process, extra);
      Results.Phase update = m.end("update", seconds, process, extra);
      phases.add(update);
      log("update", seconds);
      putSettled(update, process, m.engine.cpuSeconds(), m.hookCpu);
    } finally {
      setup.watch().expect(null);
    }
  }

  private void idle(EngineProcess process) throws IOException, InterruptedException {
    Measurement m = begin(process);
    Thread.sleep(setup.idle().toMillis());
    phases.add(m.end("idle", setup.idle().toMillis() / 1000.0, process, Map.of()));
    log("idle", setup.idle().toMillis() / 1000.0);
  }

  /**
   * The trickle: per edit, the time until the hook saw it (the hook's own count, {@code latency*Ms}) and until the
   * parent's status and every child showed it ({@code converged*Ms}, the convergence watch's).
   */
  private void latency(EngineProcess process) throws IOException, InterruptedException {
    Measurement m = begin(process, true);
    LaneWaits lanesBefore = LaneWaits.of(process);
    long start = System.nanoTime();
    setup.watch().timeEdits(ConvergenceWatch.wallNanos());
    Loadkit.Result edits;
    List<ConvergenceWatch.TimedEdit> timed;
    try {
      edits = write("trickle", "--rate=" + setup.trickleRate(), "--duration=" + setup.trickle().toMillis() + "ms");
      timed = setup.watch().editLatencies(edits.count(), setup.timeout());
    } finally {
      setup.watch().timeEdits(0);
    }
    List<Double> converged = timed.stream().map(ConvergenceWatch.TimedEdit::millis).toList();
    double seconds = setup.watch().awaitConverged(parents, start, setup.timeout(), null, process::alive);
    JsonNode latency = setup.hook().stats().path("latencyMs");
    Map<String, Double> extra = new LinkedHashMap<>();
    extra.put("edits", (double) edits.count());
    for (String p : List.of("count", "p50", "p90", "p99", "max")) {
      extra.put(p.equals("count") ? "latencyCount" : "latency" + p.toUpperCase() + "Ms", latency.path(p).asDouble());
    }
    extra.put("convergedCount", (double) converged.size());
    putPercentiles(extra, "converged", converged, List.of("p50", "p90", "p99", "max"));
    EditWrites writes = new EditWrites(setup.cluster().auditLog().writesSince(m.requests));
    List<Double> sent = writes.sentMillis(timed);
    extra.put("writesSentCount", (double) sent.size());
    putPercentiles(extra, "writesSent", sent, List.of("p50", "p99", "max"));
    LaneWaits lanes = LaneWaits.of(process);
    for (String lane : List.of("fresh", "background")) {
      if (Double.isNaN(lanes.count(lane, lanesBefore))) {
        continue; // an engine without the metric (upstream)
      }
      extra.put(lane + "Waits", lanes.count(lane, lanesBefore));
      extra.put(lane + "WaitP50Ms", lanes.quantileMillis(lane, lanesBefore, 0.5));
      extra.put(lane + "WaitP99Ms", lanes.quantileMillis(lane, lanesBefore, 0.99));
    }
    phases.add(m.end("latency", seconds, process, extra));
    LOG.info("{}: edit to hook p50 {} ms, p99 {} ms; edit to converged p50 {} ms, p99 {} ms, max {} ms over {} edits;"
        + " edit to its last write sent p50 {} ms, p99 {} ms", engine.name(), extra.get("latencyP50Ms"),
        extra.get("latencyP99Ms"), extra.get("convergedP50Ms"), extra.get("convergedP99Ms"),
        extra.get("convergedMaxMs"), edits.count(), extra.get("writesSentP50Ms"), extra.get("writesSentP99Ms"));
    logSlowest(timed, writes);
  }

  /**
   * The slowest edits of the trickle, each with its parent, when it was made and when the API server received and
   * answered its last write: where a tail comes from is found by those in the engine's {@code /debug/syncs}, the API
   * server's audit log or a GC log of the same minute.
   */
  private void logSlowest(List<ConvergenceWatch.TimedEdit> timed, EditWrites writes) {
    List<String> slowest = new ArrayList<>();
    for (int i = timed.size() - 1; i >= Math.max(0, timed.size() - SLOWEST_LOGGED); i--) {
      ConvergenceWatch.TimedEdit e = timed.get(i);
      slowest.add(String.format(Locale.ROOT, "%s edited %s, %.0f ms (%s)", e.unit(), e.stamp(), e.millis(),
          writes.lastWrite(e).map(w -> String.format(Locale.ROOT, "last write received after %.0f ms, answered after"
              + " %.0f ms", EditWrites.millisAfter(e, w.received()), EditWrites.millisAfter(e, w.answered())))
              .orElse("no write found")));
    }
    LOG.info("{}: slowest edits: {}", engine.name(), String.join("; ", slowest));
  }

  /** {@code <prefix>P50Ms} ... {@code <prefix>MaxMs}: the percentiles {@code which} ("p50", "max") of sorted values. */
  private static void putPercentiles(Map<String, Double> extra, String prefix, List<Double> sorted,
      List<String> which) {
    for (String p : which) {
      double fraction = p.equals("max") ? 1 : Integer.parseInt(p.substring(1)) / 100.0;
      extra.put(prefix + (p.equals("max") ? "Max" : p.toUpperCase(Locale.ROOT)) + "Ms", percentile(sorted, fraction));
    }
  }

  /** The nearest-rank percentile of sorted values (loadkit's too), 0 for none. */
  static double percentile(List<Double> sorted, double fraction) {
    if (sorted.isEmpty()) {
      return 0;
    }
    int rank = (int) Math.round(fraction * sorted.size());
    return sorted.get(Math.min(sorted.size(), Math.max(1, rank)) - 1);
  }

  /**
   * The related-object fan-out: each shared ConfigMap in turn gets a new value (a merge patch of the driver's), and
   * the phase waits until every parent relating to it shows that value in its status and every child. Per edit,
   * the seconds from the patch until the last of its parents was seen converged.
   */
  private void fanOut(EngineProcess process) throws IOException, InterruptedException {
    Measurement m = begin(process);
    long start = System.nanoTime();
    List<Double> times = new ArrayList<>();
    int parentsReached = 0;
    for (int k = 0; k < setup.related(); k++) {
      String name = "shared-" + k;
      String value = "f" + k;
      parentsReached += setup.watch().expectRelated(name, value);
      long edited = System.nanoTime();
      setup.cluster().client().configMaps().inNamespace(setup.namespace()).withName(name)
          .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"value\":\"" + value + "\"}}");
      times.add(setup.watch().awaitRelated(edited, setup.timeout(), process::alive));
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    times.sort(null);
    Map<String, Double> extra = new LinkedHashMap<>();
    extra.put("sharedEdits", (double) times.size());
    extra.put("parentsPerShared", (double) parentsReached / times.size());
    extra.put("fanOutMedianSeconds", percentile(times, 0.5));
    extra.put("fanOutMaxSeconds", percentile(times, 1));
    phases.add(m.end("fanout", seconds, process, extra));
    LOG.info("{}: a shared ConfigMap's edit reached its {} parents in {} s (median of {}), {} s at most",
        engine.name(), extra.get("parentsPerShared"), String.format("%.3f", extra.get("fanOutMedianSeconds")),
        times.size(), String.format("%.3f", extra.get("fanOutMaxSeconds")));
  }

  private EngineProcess restart() throws IOException, InterruptedException {
    Measurement m = begin();
    EngineProcess process = start("engine-restart.log");
    Ready ready = Ready.watch(process, setup.timeout());
    long deadline = process.startedNanos() + setup.timeout().toNanos();
    while (setup.hook().stats().path("parentsSeen").asInt() < parents) {
      if (System.nanoTime() > deadline || !process.alive()) {
        throw new IllegalStateException("after a restart the engine did not sync every parent within "
            + setup.timeout());
      }
      Thread.sleep(20);
    }
    double seconds = (System.nanoTime() - process.startedNanos()) / 1e9;
    Map<String, Double> extra = new LinkedHashMap<>();
    ready.seconds().ifPresent(s -> extra.put("readySeconds", s));
    phases.add(m.end("restart", seconds, process, new ProcessTree.Sample(0, 0), extra));
    log("restart (every parent synced)", seconds);
    return process;
  }

  private EngineProcess start(String logName) throws IOException {
    return EngineProcess.start(engine, setup.flags(), setup.cluster().engineKubeconfig(), dir.resolve(logName),
        sharding);
  }

  /**
   * With several replicas: each one's RSS, CPU seconds since it started, the objects its informers cache
   * ({@code metareactor_informer_objects}) and the parents in its share ({@code metareactor_shard_parents}), as
   * {@code replica<i>RssMB}, {@code replica<i>CpuSeconds}, {@code replica<i>InformerObjects} and
   * {@code replica<i>Parents}.
   */
  private static void putReplicas(EngineProcess process, Map<String, Double> extra) {
    if (process.replicaCount() < 2) {
      return;
    }
    for (int i = 0; i < process.replicaCount(); i++) {
      ProcessTree.Sample sample = process.sample(i);
      extra.put("replica" + i + "RssMB", sample.rssBytes() / 1048576.0);
      extra.put("replica" + i + "CpuSeconds", sample.cpuSeconds());
      extra.put("replica" + i + "InformerObjects", process.metric(i, "metareactor_informer_objects"));
      extra.put("replica" + i + "Parents", process.metric(i, "metareactor_shard_parents"));
    }
  }

  private void log(String phase, double seconds) {
    Results.Phase last = phases.get(phases.size() - 1);
    LOG.info("{} n={} run {}: {} {} s, engine CPU {} s, control plane CPU {} s, machine busy {} s, RSS {} MB,"
        + " {} API requests", engine.name(), parents, repetition, phase, String.format("%.2f", seconds),
        String.format("%.2f", last.engineCpuSeconds()), String.format("%.2f", last.controlPlaneCpuSeconds()),
        String.format("%.2f", last.machineBusySeconds()), last.engineRssBytes() >> 20,
        last.requests().values().stream().mapToLong(Long::longValue).sum());
  }

  // ---- measuring a phase

  private Measurement begin() throws IOException, InterruptedException {
    return begin(null, false);
  }

  private Measurement begin(EngineProcess process) throws IOException, InterruptedException {
    return begin(process, false);
  }

  /**
   * Starts measuring a phase, once the control plane has settled from the last one.
   *
   * @param latency whether the hook times the edits stamped from now on
   */
  private Measurement begin(EngineProcess process, boolean latency) throws IOException, InterruptedException {
    setup.cluster().awaitQuiet(Duration.ofMinutes(2));
    setup.hook().reset(latency);
    return new Measurement(setup.cluster().auditLog().mark(), process == null ? null : process.sample(),
        setup.hook().stats().path("cpuSeconds").asDouble(), setup.cluster().controlPlaneCpuSeconds(),
        ProcessTree.machineBusySeconds());
  }

  /** What a phase is measured against: the counters when it began. */
  private final class Measurement {
    private final RequestCounts.Mark requests;
    private final ProcessTree.Sample engine;
    private final double hookCpu;
    private final double controlPlaneCpu;
    private final double machineBusy;

    Measurement(RequestCounts.Mark requests, ProcessTree.Sample engine, double hookCpu, double controlPlaneCpu,
        double machineBusy) {
      this.requests = requests;
      this.engine = engine;
      this.hookCpu = hookCpu;
      this.controlPlaneCpu = controlPlaneCpu;
      this.machineBusy = machineBusy;
    }

    Results.Phase end(String phase, double seconds, EngineProcess process, Map<String, Double> extra)
        throws IOException, InterruptedException {
      return end(phase, seconds, process, engine, extra);
    }

    /** A phase of a process that ran to its end ({@code metareactor preview}): its CPU as measured from outside. */
    Results.Phase endOneShot(String phase, double seconds, double cpuSeconds, Map<String, Double> extra)
        throws IOException, InterruptedException {
      return phase(phase, seconds, cpuSeconds, 0, extra);
    }

    /** @param from the engine's CPU and memory when the phase began (zero for a phase that starts the process) */
    Results.Phase end(String phase, double seconds, EngineProcess process, ProcessTree.Sample from,
        Map<String, Double> extra) throws IOException, InterruptedException {
      ProcessTree.Sample now = process.sample();
      return phase(phase, seconds, now.cpuSeconds() - from.cpuSeconds(), now.rssBytes(), extra);
    }

    private Results.Phase phase(String phase, double seconds, double engineCpu, long engineRss,
        Map<String, Double> extra) throws IOException, InterruptedException {
      double controlPlane = setup.cluster().controlPlaneCpuSeconds() - controlPlaneCpu;
      double busy = ProcessTree.machineBusySeconds() - machineBusy;
      JsonNode hook = setup.hook().stats();
      RequestCounts served = setup.cluster().auditLog().since(requests);
      return new Results.Phase(phase, seconds, engineCpu, engineRss, hook.path("cpuSeconds").asDouble() - hookCpu,
          hook.path("calls").asLong(), controlPlane, busy, served.byRequest(), extra);
    }
  }

  /**
   * Adds to {@code phase} the hook's calls and the engine's and the hook's CPU from its start until the control
   * plane was quiet after it: every sync its changes caused, with those that ran after the harness saw everything
   * converged (the follow-up syncs of the engine's own writes coming back), which the phase's own figures leave out.
   * Engines differ in how much of that work falls after convergence, so only these compare the whole cost of a wave.
   * The wait is the one the next phase makes anyway before it begins. With {@code --shadow}, also the engine's count
   * of the answers its shadow hook gave the same ({@code shadowSame}) and otherwise ({@code shadowDiffers}) since it
   * started.
   *
   * @param engineCpuAtStart the engine's CPU seconds when the phase began (0 for a phase that starts it)
   * @param hookCpuAtStart the hook's CPU seconds when the phase began
   */
  private void putSettled(Results.Phase phase, EngineProcess process, double engineCpuAtStart, double hookCpuAtStart)
      throws IOException, InterruptedException {
    setup.cluster().awaitQuiet(Duration.ofMinutes(2));
    JsonNode hook = setup.hook().stats();
    phase.extra().put("hookCallsSettled", hook.path("calls").asDouble());
    phase.extra().put("engineCpuSettled", process.sample().cpuSeconds() - engineCpuAtStart);
    phase.extra().put("hookCpuSettled", hook.path("cpuSeconds").asDouble() - hookCpuAtStart);
    if (setup.shadow()) {
      for (String result : List.of("same", "differs")) {
        phase.extra().put("shadow" + Character.toUpperCase(result.charAt(0)) + result.substring(1),
            process.metric(SHADOW_SYNCS, "result=\"" + result + "\""));
      }
    }
  }

  /** Polls the engine's {@code /readyz} on its own thread while the phase goes on. */
  private record Ready(Thread thread, double[] result) {
    static Ready watch(EngineProcess process, Duration timeout) {
      double[] result = {-1};
      Thread thread = new Thread(() -> {
        try {
          process.awaitReady(timeout).ifPresent(d -> result[0] = d.toNanos() / 1e9);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "readyz");
      thread.setDaemon(true);
      thread.start();
      return new Ready(thread, result);
    }

    /** When it became ready; waits a little, since readiness normally comes long before convergence. */
    Optional<Double> seconds() throws InterruptedException {
      thread.join(Duration.ofSeconds(2).toMillis());
      return result[0] < 0 ? Optional.empty() : Optional.of(result[0]);
    }
  }

  // ---- the controller object and the bulk writer

  /**
   * The bench controller, the same for every engine: ConfigMap children (outputs) updated in place, its sync hook the
   * Go webhook or the same answer in CEL.
   */
  GenericKubernetesResource controllerObject() {
    return setup.cluster().client().getKubernetesSerialization()
        .unmarshal(setup.kind().controllerObject(setup.hook().url(""), engine.syncHook(), setup.children(),
            setup.shadow(), setup.resyncSeconds(), setup.related() > 0),
            GenericKubernetesResource.class);
  }

  /** Runs a loadkit bulk command on this run's units (parents, or a map's inputs). */
  private Loadkit.Result write(String command, String... args) throws IOException, InterruptedException {
    List<String> all = new ArrayList<>(List.of("--namespace=" + setup.namespace(), "--count=" + parents));
    all.addAll(setup.kind().writerFlags());
    all.addAll(List.of(args));
    return setup.loadkit().run(command, all.toArray(String[]::new));
  }

  /** How long deleting the bench objects may take: longer than a phase, at least five minutes. */
  static Duration deleteTimeout(Duration phaseTimeout) {
    Duration five = Duration.ofMinutes(5);
    return phaseTimeout.compareTo(five) > 0 ? phaseTimeout : five;
  }

  static String toJson(Object value) {
    return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(value);
  }

  static Results.Harness readResults(Path file) {
    return JSON.readValue(file.toFile(), Results.Harness.class);
  }
}
