package dev.metareactor.engine.cli;

import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.HotLoopSettings;
import dev.metareactor.engine.config.LeaderElectionSettings;
import dev.metareactor.engine.config.ListenAddress;
import dev.metareactor.engine.config.LogSettings;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.RetrySettings;
import dev.metareactor.engine.config.ShardingSettings;
import dev.metareactor.engine.config.SyncRecording;
import dev.metareactor.engine.config.TracingSettings;
import dev.metareactor.http.GoDuration;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The command line: every Metacontroller flag under the same name, meaning and default (except the client rate,
 * see docs/operations.md), plus Metareactor's own. Flags take one or two dashes and {@code --flag=value} or
 * {@code --flag value}, as Go's flag package does; booleans also accept {@code --flag=false}.
 *
 * <p>A bad value ends the process with exit code 2 and one line on stderr naming the flag.
 */
@Command(
    name = "metareactor",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = "Lambda controllers for Kubernetes: hosts CompositeController, DecoratorController and "
        + "MapController objects, a drop-in replacement for Metacontroller.",
    versionProvider = EngineCommand.Version.class)
public final class EngineCommand implements Callable<Integer> {

  /** Exit code for a bad command line, as picocli and Go's flag package use. */
  public static final int USAGE_ERROR = 2;

  // --- Metacontroller's flags -----------------------------------------------------------------------

  @Option(names = {"--kubeconfig", "-kubeconfig"}, paramLabel = "PATH", defaultValue = "",
      description = "Path to a kubeconfig; empty: in-cluster configuration, else KUBECONFIG or ~/.kube/config.")
  String kubeconfig;

  @Option(names = {"--discovery-interval", "-discovery-interval"}, paramLabel = "DURATION", defaultValue = "30s",
      converter = DurationConverter.class,
          description = "How often to refresh API discovery (default: ${DEFAULT-VALUE}).")
  Duration discoveryInterval;

  @Option(names = {"--cache-flush-interval", "-cache-flush-interval"}, paramLabel = "DURATION", defaultValue = "30m",
      converter = DurationConverter.class,
      description = "How often informers replay their cache to every controller (default: ${DEFAULT-VALUE}).")
  Duration cacheFlushInterval;

  @Option(names = {"--metrics-address", "-metrics-address"}, paramLabel = "ADDR", defaultValue = ":9999",
      converter = AddressConverter.class,
          description = "Where to serve /metrics; 0 disables (default: ${DEFAULT-VALUE}).")
  ListenAddress metricsAddress;

  @Option(names = {"--health-probe-bind-address", "-health-probe-bind-address"}, paramLabel = "ADDR",
      defaultValue = ":8081", converter = AddressConverter.class,
      description = "Where to serve /healthz and /readyz; 0 disables (default: ${DEFAULT-VALUE}).")
  ListenAddress healthProbeAddress;

  @Option(names = {"--client-go-qps", "-client-go-qps"}, paramLabel = "QPS", defaultValue = "50",
      converter = RateConverter.class,
      description = "Sustained rate of Kubernetes API requests (default: ${DEFAULT-VALUE}; Metacontroller: 5).")
  double clientQps;

  @Option(names = {"--client-go-burst", "-client-go-burst"}, paramLabel = "N", defaultValue = "100",
      description = "Burst of Kubernetes API requests (default: ${DEFAULT-VALUE}; Metacontroller: 10).")
  int clientBurst;

  @Option(names = {"--workers", "-workers"}, paramLabel = "N", defaultValue = "5",
      description = "Concurrent syncs per hosted controller (default: ${DEFAULT-VALUE}).")
  int workers;

  @Option(names = {"--events-qps", "-events-qps"}, paramLabel = "QPS", defaultValue = "1/300",
      converter = RateConverter.class,
      description = "Sustained rate of Kubernetes Events per object; a number or a fraction "
          + "(default: ${DEFAULT-VALUE}).")
  double eventsQps;

  @Option(names = {"--events-burst", "-events-burst"}, paramLabel = "N", defaultValue = "25",
      description = "Burst of Kubernetes Events per object (default: ${DEFAULT-VALUE}).")
  int eventsBurst;

  @Option(names = {"--pprof-address", "-pprof-address"}, paramLabel = "ADDR", defaultValue = "0",
      converter = AddressConverter.class,
      description = "Where Metacontroller serves Go's pprof, the JVM's equivalent: JDK Flight Recorder recordings "
          + "(/debug/jfr?seconds=N) and thread dumps (/debug/threads) on request; 0 disables it "
          + "(default: ${DEFAULT-VALUE}).")
  ListenAddress pprofAddress;

  @Option(names = {"--leader-election", "-leader-election"}, arity = "0..1", fallbackValue = "true",
      defaultValue = "false", description = "Run only while holding the leader lease (default: ${DEFAULT-VALUE}).")
  boolean leaderElection;

  @Option(names = {"--leader-election-resource-lock", "-leader-election-resource-lock"}, paramLabel = "KIND",
      defaultValue = "leases", description = "Lock kind; only leases (default: ${DEFAULT-VALUE}).")
  String leaderElectionResourceLock;

  @Option(names = {"--leader-election-namespace", "-leader-election-namespace"}, paramLabel = "NS",
      defaultValue = "", description = "Namespace of the lease; empty: the pod's namespace.")
  String leaderElectionNamespace;

  @Option(names = {"--leader-election-id", "-leader-election-id"}, paramLabel = "NAME", defaultValue = "metacontroller",
      description = "Name of the lease (default: ${DEFAULT-VALUE}).")
  String leaderElectionId;

  @Option(names = "--sharding", arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "Spread parents over the replicas: each holds a Lease of its own and caches and syncs only the "
          + "parents assigned to it; the leader-election lease's holder assigns (default: ${DEFAULT-VALUE}).")
  boolean sharding;

  @Option(names = "--shard-name", paramLabel = "NAME", defaultValue = "",
      description = "This replica's shard with --sharding; empty: the host (pod) name.")
  String shardName;

  @Option(names = {"--target-label-selector", "-target-label-selector"}, paramLabel = "SELECTOR", defaultValue = "",
      description = "Only host controller objects whose labels match this selector; empty: all.")
  String targetLabelSelector;

  @Option(names = {"--apply-strategy", "-apply-strategy"}, paramLabel = "STRATEGY", defaultValue = "dynamic-apply",
      description = "How children are written: dynamic-apply (default: ${DEFAULT-VALUE}) or server-side-apply.")
  String applyStrategy;

  @Option(names = {"--apply-strategy-ssa-field-manager", "-apply-strategy-ssa-field-manager"}, paramLabel = "NAME",
      defaultValue = "metacontroller", description = "Field manager for server-side apply (default: ${DEFAULT-VALUE}).")
  String ssaFieldManager;

  @Option(names = {"--zap-log-level", "-zap-log-level"}, paramLabel = "LEVEL", defaultValue = "",
      description = "debug, info, error, or a verbosity > 0 (1-4: debug, 5+: trace); default info (debug with"
          + " --zap-devel).")
  String zapLogLevel;

  @Option(names = {"--zap-devel", "-zap-devel"}, arity = "0..1", fallbackValue = "true", defaultValue = "false",
      description = "Development logging: console format, debug level (default: ${DEFAULT-VALUE}).")
  boolean zapDevel;

  @Option(names = {"--zap-encoder", "-zap-encoder"}, paramLabel = "FORMAT", defaultValue = "",
      description = "json or console; default json (console with --zap-devel).")
  String zapEncoder;

  @Option(names = {"--zap-stacktrace-level", "-zap-stacktrace-level"}, paramLabel = "LEVEL", defaultValue = "",
      description = "Level at and above which a log line carries a stack trace (its exception's, else where it was"
          + " logged): info, error or panic (none); default error (warn with --zap-devel).")
  String zapStacktraceLevel;

  @Option(names = {"--zap-time-encoding", "-zap-time-encoding"}, paramLabel = "FORMAT", defaultValue = "",
      description = "Time in JSON lines: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano (default rfc3339).")
  String zapTimeEncoding;

  // --- Metareactor's own flags ------------------------------------------------------------------------

  @Option(names = {"--retry-base-delay", "-retry-base-delay"}, paramLabel = "DURATION", defaultValue = "5ms",
      converter = DurationConverter.class,
      description = "First retry delay of a failed sync; doubles per failure (default: ${DEFAULT-VALUE}).")
  Duration retryBaseDelay;

  @Option(names = {"--retry-max-delay", "-retry-max-delay"}, paramLabel = "DURATION", defaultValue = "1000s",
      converter = DurationConverter.class, description = "Longest retry delay (default: ${DEFAULT-VALUE}).")
  Duration retryMaxDelay;

  @Option(names = {"--retry-qps", "-retry-qps"}, paramLabel = "QPS", defaultValue = "10",
      converter = RateConverter.class,
      description = "Retries per second across all parents of one controller (default: ${DEFAULT-VALUE}).")
  double retryQps;

  @Option(names = {"--retry-burst", "-retry-burst"}, paramLabel = "N", defaultValue = "100",
      description = "Burst of retries per controller (default: ${DEFAULT-VALUE}).")
  int retryBurst;

  @Option(names = {"--hot-loop-repeats", "-hot-loop-repeats"}, paramLabel = "N", defaultValue = "5",
      description = "The same write made this many times within --hot-loop-window is a hot loop: a HotLoop Warning on"
          + " the parent and its syncs held back; 0 turns the guard off (default: ${DEFAULT-VALUE}).")
  int hotLoopRepeats;

  @Option(names = {"--hot-loop-window", "-hot-loop-window"}, paramLabel = "DURATION", defaultValue = "60s",
      converter = DurationConverter.class,
      description = "How far back a parent's writes are compared for a hot loop (default: ${DEFAULT-VALUE}).")
  Duration hotLoopWindow;

  @Option(names = {"--hot-loop-max-hold", "-hot-loop-max-hold"}, paramLabel = "DURATION", defaultValue = "5m",
      converter = DurationConverter.class,
      description = "Longest hold of a parent in a hot loop; the first is 5s, doubling (default: ${DEFAULT-VALUE}).")
  Duration hotLoopMaxHold;

  @Option(names = {"--api-concurrency", "-api-concurrency"}, paramLabel = "N", defaultValue = "32",
      description = "Kubernetes API calls in flight at once (default: ${DEFAULT-VALUE}).")
  int apiConcurrency;

  @Option(names = {"--hook-max-response-size", "-hook-max-response-size"}, paramLabel = "SIZE", defaultValue = "8Mi",
      converter = SizeConverter.class,
      description = "Largest hook answer read; a larger one fails its sync with an error Event (bytes, or with a"
          + " Ki, Mi or Gi suffix; default: ${DEFAULT-VALUE}). It also sets the JSON tokens an answer may have (one"
          + " per 8 bytes) and the memory all answers in flight may take together (16 times it).")
  long hookMaxResponseSize;

  @Option(names = {"--shutdown-timeout", "-shutdown-timeout"}, paramLabel = "DURATION", defaultValue = "30s",
      converter = DurationConverter.class,
      description = "How long in-flight syncs may finish after SIGTERM (default: ${DEFAULT-VALUE}).")
  Duration shutdownTimeout;

  @Option(names = {"--record-syncs", "-record-syncs"}, paramLabel = "DIR", defaultValue = "",
      description = "Record every sync of the controllers annotated metareactor.dev/record-syncs: \"true\" as a JSON"
          + " file under DIR (hook requests and answers, writes made; Secret data and credentials redacted), for"
          + " metareactor replay. Empty (the default): no recording.")
  String recordSyncs;

  @Option(names = {"--record-syncs-max-size", "-record-syncs-max-size"}, paramLabel = "SIZE", defaultValue = "100Mi",
      converter = SizeConverter.class,
      description = "What each controller's recordings may take; the oldest go first (default: ${DEFAULT-VALUE}).")
  long recordSyncsMaxSize;

  @Option(names = {"--tracing", "-tracing"}, defaultValue = "false", fallbackValue = "true", arity = "0..1",
      description = "Trace every sync with OpenTelemetry (a span for the sync, its hook calls, each write and the"
          + " status) and send W3C traceparent headers to hooks; the OTEL_* environment configures the exporter"
          + " (OTLP over HTTP by default; OTEL_TRACES_EXPORTER=none exports nothing). Default: ${DEFAULT-VALUE}.")
  boolean tracing;

  @Option(names = {"--tracing-sample-ratio", "-tracing-sample-ratio"}, paramLabel = "RATIO", defaultValue = "1.0",
      description = "With --tracing, the share of syncs traced, 0 to 1 (default: ${DEFAULT-VALUE});"
          + " OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, when set, win.")
  double tracingSampleRatio;

  private final Function<EngineOptions, Integer> runner;

  /** @param runner runs the engine with the parsed options and returns the exit code */
  public EngineCommand(Function<EngineOptions, Integer> runner) {
    this.runner = runner;
  }

  @Override
  public Integer call() {
    return runner.apply(toOptions());
  }

  /**
   * Parses flags into validated options, as the command line does, for tests and for embedding the engine.
   *
   * @throws IllegalArgumentException naming the flag when a value is invalid
   */
  public static EngineOptions parse(String... args) {
    EngineCommand command = new EngineCommand(options -> 0);
    try {
      new CommandLine(command).parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(oneLine(e.getMessage()), e);
    }
    return command.toOptions();
  }

  /**
   * The validated options.
   *
   * @throws CommandLine.ParameterException (through {@link #execute}) for values that fail validation
   */
  EngineOptions toOptions() {
    return EngineOptions.builder()
        .kubeconfig(kubeconfig)
        .discoveryInterval(discoveryInterval)
        .cacheFlushInterval(cacheFlushInterval)
        .metricsAddress(metricsAddress)
        .healthProbeAddress(healthProbeAddress)
        .profilingAddress(pprofAddress)
        .apiRate(new RateLimit(clientQps, clientBurst))
        .workers(workers)
        .eventRate(new RateLimit(eventsQps, eventsBurst))
        .leaderElection(new LeaderElectionSettings(leaderElection, leaderElectionResourceLock, leaderElectionNamespace,
            leaderElectionId))
        .sharding(new ShardingSettings(sharding, shardName))
        .targetLabelSelector(targetLabelSelector)
        .applyStrategy(ApplyStrategy.parse(applyStrategy))
        .ssaFieldManager(ssaFieldManager)
        .logging(LogSettings.fromZapFlags(zapLogLevel, zapDevel, zapEncoder, zapTimeEncoding,
            zapStacktraceLevel))
        .retry(new RetrySettings(retryBaseDelay, retryMaxDelay, new RateLimit(retryQps, retryBurst)))
        .hotLoops(new HotLoopSettings(hotLoopRepeats, hotLoopWindow, HotLoopSettings.DEFAULT.firstHold(),
            hotLoopMaxHold))
        .apiConcurrency(apiConcurrency)
        .hookMaxResponseSize(hookMaxResponseSize)
        .shutdownTimeout(shutdownTimeout)
        .recording(new SyncRecording(recordSyncs.isBlank() ? Optional.empty() : Optional.of(Path.of(recordSyncs)),
            recordSyncsMaxSize))
        .tracing(new TracingSettings(tracing, tracingSampleRatio))
        .build();
  }

  /**
   * Parses {@code args} and runs; returns the process exit code. Usage errors print one line to {@code err}.
   */
  public static int execute(String[] args, Function<EngineOptions, Integer> runner, PrintWriter out, PrintWriter err) {
    EngineCommand command = new EngineCommand(runner);
    CommandLine commandLine = new CommandLine(command);
    commandLine.setOut(out);
    commandLine.setErr(err);
    commandLine.setParameterExceptionHandler((ex, ignored) -> {
      err.println("metareactor: " + oneLine(ex.getMessage()) + " (see --help)");
      err.flush();
      return USAGE_ERROR;
    });
    commandLine.setExecutionExceptionHandler((ex, cl, parseResult) -> {
      if (ex instanceof IllegalArgumentException) {
        err.println("metareactor: " + oneLine(ex.getMessage()) + " (see --help)");
        err.flush();
        return USAGE_ERROR;
      }
      throw ex;
    });
    return commandLine.execute(args);
  }

  private static String oneLine(@Nullable String message) {
    return message == null ? "invalid arguments" : message.replaceAll("\\s*\\R\\s*", " ").strip();
  }

  /** Go durations: {@code 30s}, {@code 1m30s}, {@code 250ms}. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return GoDuration.parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }

  /** A size in bytes: {@code 1000}, {@code 512Ki}, {@code 8Mi}, {@code 1Gi} (Kubernetes' binary suffixes). */
  static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      String text = value.strip();
      int shift = text.endsWith("Ki") ? 10 : text.endsWith("Mi") ? 20 : text.endsWith("Gi") ? 30 : 0;
      try {
        long number = Long.parseLong(shift == 0 ? text : text.substring(0, text.length() - 2));
        if (number < 1 || number > Long.MAX_VALUE >> shift) {
          throw new CommandLine.TypeConversionException("'" + value + "' is not a positive size");
        }
        return number << shift;
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a size (bytes, or with Ki, Mi, Gi)");
      }
    }
  }

  /** {@code :9999}, {@code 127.0.0.1:8081}, or {@code 0}. */
  static final class AddressConverter implements CommandLine.ITypeConverter<ListenAddress> {
    @Override
    public ListenAddress convert(String value) {
      try {
        return ListenAddress.parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }

  /** A positive number, or a fraction such as {@code 1/300} (Metacontroller documents its default that way). */
  static final class RateConverter implements CommandLine.ITypeConverter<Double> {
    @Override
    public Double convert(String value) {
      String text = value.strip();
      try {
        int slash = text.indexOf('/');
        double rate = slash < 0
            ? Double.parseDouble(text)
            : Double.parseDouble(text.substring(0, slash)) / Double.parseDouble(text.substring(slash + 1));
        if (!(rate > 0) || Double.isInfinite(rate)) {
          throw new CommandLine.TypeConversionException("'" + value + "' is not a positive rate");
        }
        return rate;
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a number or a fraction such as 1/300");
      }
    }
  }

  /** The version from the jar manifest, when packaged. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = EngineCommand.class.getPackage().getImplementationVersion();
      return new String[] {"metareactor " + (version == null ? "(development build)" : version)};
    }
  }
}
