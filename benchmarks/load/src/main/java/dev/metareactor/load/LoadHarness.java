package dev.metareactor.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The end-to-end load harness: engines that take Metacontroller's flags, each run as its own process against the
 * same control plane, the same hook and the same flags, measured the same way from outside, alternating between
 * engines so that a drift of the machine hits them all alike. See {@code benchmarks/README.md}.
 */
@Command(name = "load-harness", mixinStandardHelpOptions = true,
    description = "Measures lambda-controller engines end to end on a local control plane.")
public final class LoadHarness implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(LoadHarness.class);

  @Option(names = "--report", paramLabel = "DIR",
      description = "Measure nothing: write DIR/summary.md and DIR/chart.png again from DIR/results.json.")
  Path report;

  @Option(names = "--engine", paramLabel = "NAME=COMMAND",
      description = "An engine to measure, e.g. upstream=../shared/upstream/metacontroller; repeat for several. "
          + "The harness appends --kubeconfig, --metrics-address, --health-probe-bind-address and --flags.")
  List<String> engines;

  @Option(names = "--parents", split = ",", defaultValue = "1000",
      description = "Parent counts to measure, comma-separated (default: ${DEFAULT-VALUE}); for --controller map, "
          + "input counts: one parent selecting that many input ConfigMaps.")
  List<Integer> sizes;

  @Option(names = "--children", defaultValue = "3",
      description = "ConfigMaps per parent, or per input for map (default: ${DEFAULT-VALUE}).")
  int children;

  @Option(names = "--replicas", split = ",", defaultValue = "1",
      description = "Replica counts to run each engine as, comma-separated (default: ${DEFAULT-VALUE}); more than 1 "
          + "runs that many processes of the engine with Metareactor's --sharding (each its own shard), named "
          + "<engine>-x<replicas> in the results.")
  List<Integer> replicaCounts;

  @Option(names = "--hook", split = ",", defaultValue = "webhook",
      description = "How the sync hook answers, comma-separated to run every engine under each in turn (default: "
          + "${DEFAULT-VALUE}): webhook (the compiled Go hook) or cel (the same answer as a CEL expression the engine "
          + "evaluates; Metareactor's only, named <engine>-cel in the results; composite, no --related, phases "
          + "converge, update, idle).")
  List<String> hooks;

  @Option(names = "--runs", defaultValue = "3",
      description = "Repetitions per engine and size (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(names = "--controller", defaultValue = "composite",
      description = "composite (CompositeController), decorator (DecoratorController) or map (MapController: one "
          + "parent, --parents inputs; upstream Metacontroller has no MapController and cannot run it) "
          + "(default: ${DEFAULT-VALUE}).")
  String controller;

  @Option(names = "--flags", defaultValue = "--client-go-qps=1000 --client-go-burst=2000 --workers=64",
      description = "Flags given to every engine (default: ${DEFAULT-VALUE}); \"\" for each engine's defaults.")
  String flags;

  @Option(names = "--phases", split = ",", defaultValue = "converge,update,idle,latency,fanout,restart",
      description = "Phases after converge (default: ${DEFAULT-VALUE}); fanout runs only with --related.")
  List<String> phases;

  @Option(names = "--resync", defaultValue = "0", paramLabel = "SECONDS",
      description = "The controller's resyncPeriodSeconds (default: none, each engine's own): every parent is "
          + "synced again that often, while the latency trickle's edits are timed.")
  int resync;

  @Option(names = "--related", defaultValue = "0", paramLabel = "K",
      description = "Relate parent i to the shared ConfigMap shared-(i %% K) through a customize hook; the hook copies "
          + "its value into the parent's status and children, and the fanout phase edits each shared ConfigMap in "
          + "turn, until every parent relating to it shows the new value (default: none; composite and decorator).")
  int related;

  @Option(names = "--idle", defaultValue = "60s", converter = Durations.class,
      description = "Length of the idle phase (default: ${DEFAULT-VALUE}).")
  Duration idle;

  @Option(names = "--trickle-rate", defaultValue = "20", description = "Edits per second in the latency phase.")
  double trickleRate;

  @Option(names = "--trickle", defaultValue = "30s", converter = Durations.class,
      description = "Length of the latency phase's trickle (default: ${DEFAULT-VALUE}).")
  Duration trickle;

  // A plain flag rather than picocli's negatable form: with a default of true, picocli reads --no-ceiling as "true".
  @Option(names = "--no-ceiling",
      description = "Skip measuring the API server's raw create rate for each size (measured first by default).")
  boolean noCeiling;

  @Option(names = "--shadow",
      description = "Make the bench hook the controller's shadow hook too (metareactor.dev/shadow-<hook>-url; upstream "
          + "ignores it): every answer is also asked of the shadow and compared. The hook's calls and CPU include the "
          + "shadow's.")
  boolean shadow;

  @Option(names = "--timeout", defaultValue = "10m", converter = Durations.class,
      description = "Longest wait for one phase (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--namespace", defaultValue = "load-bench", description = "Namespace of the bench objects.")
  String namespace;

  @Option(names = "--repository", defaultValue = ".",
      description = "The Metareactor checkout (default: the current directory).")
  Path repository;

  @Option(names = "--state", description = "State directory of the local control plane (METAREACTOR_STATE of "
      + "hack/local-cluster.sh; default: the script's own).")
  Path state;

  @Option(names = "--out", description = "Where results go (default: benchmarks/load/results/<UTC time>).")
  Path out;

  @Option(names = "--cache",
      description = "Build cache for loadkit (default: $METAREACTOR_CACHE or ~/.cache/metareactor).")
  Path cache;

  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    Runtime.getRuntime().addShutdownHook(new Thread(LoadHarness::stopChildren, "stop-children"));
    System.exit(new CommandLine(new LoadHarness()).execute(args));
  }

  /**
   * Stops whatever the harness started and still runs (an engine, the hook server) when the harness itself is
   * stopped (SIGTERM, Ctrl-C): an engine left running would go on resyncing and calling hooks beside every later
   * measurement on the machine. The local control plane is not among them: it runs on, detached, to be reused.
   */
  static void stopChildren() {
    List<ProcessHandle> children = ProcessHandle.current().descendants().toList();
    children.forEach(ProcessHandle::destroy);
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    for (ProcessHandle child : children) {
      try {
        child.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (ExecutionException | TimeoutException e) {
        child.destroyForcibly();
      }
    }
    children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  @Override
  public Integer call() throws Exception {
    if (report != null) {
      Report.write(LoadRun.readResults(report.resolve("results.json")), report);
      return 0;
    }
    if (engines == null || engines.isEmpty()) {
      throw new CommandLine.ParameterException(new CommandLine(this), "Missing required option: --engine");
    }
    repository = repository.toAbsolutePath().normalize();
    if (!Files.isRegularFile(repository.resolve("hack/local-cluster.sh"))) {
      throw new CommandLine.ParameterException(new CommandLine(this), repository + " is not a Metareactor checkout");
    }
    ControllerKind kind;
    try {
      kind = ControllerKind.of(controller);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
    }
    if (related > 0 && !kind.customizes()) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--related: a " + controller
          + " controller has no customize hook");
    }
    List<HookKind> hookKinds;
    try {
      hookKinds = hooks.stream().map(HookKind::of).distinct().toList();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
    }
    for (HookKind hookKind : hookKinds) {
      String refusal = hookKind.refusal(kind, related, phases);
      if (refusal != null) {
        throw new CommandLine.ParameterException(new CommandLine(this), refusal);
      }
    }
    List<EngineProcess.Engine> engineList = engines.stream().map(EngineProcess.Engine::parse)
        .flatMap(engine -> hookKinds.stream().map(hookKind -> new EngineProcess.Engine(
            hookKind.engineName(engine.name()), engine.command(), hookKind)))
        .toList();
    String startedAt = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC).format(Instant.now());
    Path results = out != null ? out : repository.resolve("benchmarks/load/results").resolve(startedAt);
    Files.createDirectories(results);
    Path cacheDir = cache != null ? cache : defaultCache();
    List<String> commonFlags = flags.isBlank() ? List.of() : List.of(flags.trim().split("\\s+"));

    try (Cluster cluster = Cluster.connect(repository, state)) {
      cluster.installCrds(repository);
      cluster.ensureNamespace(namespace);
      cluster.deleteControllers();
      cluster.deleteBenchObjects(namespace, LoadRun.deleteTimeout(timeout));
      Loadkit loadkit = Loadkit.build(repository, cacheDir, cluster.writeCredentials(results.resolve("credentials")));
      List<Results.Ceiling> ceilings = new ArrayList<>();
      if (!noCeiling) {
        cluster.ensureNamespace(namespace + "-ceiling");
        for (int size : sizes) {
          int objects = size * children;
          Loadkit.Result r = loadkit.run("ceiling", "--namespace=" + namespace + "-ceiling", "--count=" + objects);
          ceilings.add(new Results.Ceiling(size, objects, 64, r.seconds(), r.perSecond()));
          LOG.info("raw write ceiling: {} ConfigMaps in {} s = {}/s", objects, String.format("%.2f", r.seconds()),
              Math.round(r.perSecond()));
        }
      }
      try (Loadkit.Hook hook = loadkit.startHook(results);
          ConvergenceWatch watch = new ConvergenceWatch(cluster.client(), namespace, children, kind)) {
        watch.awaitSynced(Duration.ofMinutes(1));
        LoadRun.Setup setup = new LoadRun.Setup(cluster, loadkit, hook, watch, namespace, kind, children,
            commonFlags, phases, idle, trickleRate, trickle, timeout, shadow, resync, related);
        List<Results.Run> runList = new ArrayList<>();
        for (int size : sizes) {
          for (int rep = 1; rep <= runs; rep++) {
            for (EngineProcess.Engine engine : engineList) {
              for (int replicas : replicaCounts) {
                EngineProcess.Engine named = replicas == 1 ? engine
                    : new EngineProcess.Engine(engine.name() + "-x" + replicas, engine.command(),
                        engine.syncHook());
                LOG.info("=== {} {} x {} children, {} run {}/{}", size, kind.units(), children, named.name(), rep,
                    runs);
                Path dir = results.resolve("n" + size).resolve(named.name() + "-" + rep);
                EngineProcess.Sharding sharding = replicas == 1 ? EngineProcess.Sharding.NONE
                    : new EngineProcess.Sharding(replicas, namespace, "bench-shards");
                runList.add(new LoadRun(setup, named, sharding, size, rep, dir).run());
                write(results, startedAt, engineList, commonFlags, ceilings, runList);
              }
            }
          }
        }
        cluster.deleteBenchObjects(namespace, LoadRun.deleteTimeout(timeout));
        Results.Harness harness = write(results, startedAt, engineList, commonFlags, ceilings, runList);
        Report.write(harness, results);
        LOG.info("results: {}", results);
        return runList.stream().allMatch(r -> r.error() == null) ? 0 : 1;
      }
    }
  }

  private Results.Harness write(Path results, String startedAt, List<EngineProcess.Engine> engineList,
      List<String> commonFlags, List<Results.Ceiling> ceilings,
      List<Results.Run> runList) throws IOException {
    Map<String, List<String>> engineMap = new LinkedHashMap<>();
    engineList.forEach(e -> replicaCounts.forEach(replicas -> engineMap.put(
        replicas == 1 ? e.name() : e.name() + "-x" + replicas, e.command())));
    Results.Harness harness = new Results.Harness(startedAt, controller, children, sizes, runs, commonFlags,
        engineMap, machine(), ceilings, runList, resync, related);
    Files.writeString(results.resolve("results.json"), LoadRun.toJson(harness));
    return harness;
  }

  private static Map<String, String> machine() {
    Map<String, String> machine = new LinkedHashMap<>();
    machine.put("cpus", Integer.toString(Runtime.getRuntime().availableProcessors()));
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          machine.put("cpu", line.substring(line.indexOf(':') + 1).trim());
          break;
        }
      }
      String mem = Files.readAllLines(Path.of("/proc/meminfo")).get(0);
      machine.put("memory", mem.replaceAll("\\s+", " "));
      machine.put("loadavgAtStart", Files.readString(Path.of("/proc/loadavg")).trim());
    } catch (IOException e) {
      machine.put("error", e.getMessage());
    }
    return machine;
  }

  private static Path defaultCache() {
    String env = System.getenv("METAREACTOR_CACHE");
    return env != null && !env.isBlank() ? Path.of(env) : Path.of(System.getProperty("user.home"), ".cache",
        "metareactor");
  }

  /** {@code 60s}, {@code 10m}, {@code 500ms}. */
  static final class Durations implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      String v = value.trim();
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      long n = Long.parseLong(v.substring(0, v.length() - 1));
      return switch (v.charAt(v.length() - 1)) {
        case 's' -> Duration.ofSeconds(n);
        case 'm' -> Duration.ofMinutes(n);
        case 'h' -> Duration.ofHours(n);
        default -> throw new CommandLine.TypeConversionException("expected 500ms, 60s, 10m or 1h, got " + value);
      };
    }
  }
}
