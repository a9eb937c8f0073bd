package dev.metareactor.engine.cli;

import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.LogSettings;
import dev.metareactor.engine.host.ControllerKind;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.preview.Preview;
import dev.metareactor.engine.preview.PreviewReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * {@code metareactor preview}: what a controller would write to the live cluster now, without writing it
 * ({@link Preview}). Exit codes: 0 nothing would be written, 1 something would, 2 a sync failed or the preview
 * could not run (a bad command line too).
 */
@Command(
    name = "metareactor preview",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {"Shows what a controller would write to the cluster now, without writing anything: it reads the "
        + "live state as the engine does, calls the controller's hooks, runs the engine's sync for each parent "
        + "and prints every write it would make (API server dry runs, labelled as such).",
        "Exit code: 0 nothing would be written, 1 something would, 2 a sync failed or the preview could not run."})
public final class PreviewCommand implements Callable<Integer> {

  @Option(names = "--kubeconfig", paramLabel = "PATH", defaultValue = "",
      description = "Path to a kubeconfig; empty: KUBECONFIG or ~/.kube/config, else in-cluster.")
  String kubeconfig;

  @Option(names = "--controller", paramLabel = "KIND/NAME",
      description = "The controller object in the cluster, e.g. compositecontroller/hello-world.")
  @Nullable String controller;

  @Option(names = {"-f", "--filename"}, paramLabel = "FILE",
      description = "The controller object from a file (YAML or JSON), as it would be applied.")
  @Nullable Path file;

  @Option(names = "--parent", paramLabel = "NAMESPACE/NAME",
      description = "Only this parent (NAME when cluster-scoped); default: every parent (--all).")
  @Nullable String parent;

  @Option(names = "--all", description = "Every parent the controller syncs (the default).")
  boolean all;

  @Option(names = "--hook-url", paramLabel = "URL",
      description = "Call this URL instead of the sync hook (the map hook of a MapController): try a new version.")
  @Nullable String hookUrl;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text",
      description = "text, json or yaml (default: ${DEFAULT-VALUE}).")
  String output;

  @Option(names = "--apply-strategy", paramLabel = "STRATEGY", defaultValue = "dynamic-apply",
      description = "As the engine is run with: dynamic-apply or server-side-apply (default: ${DEFAULT-VALUE}).")
  String applyStrategy;

  @Option(names = "--apply-strategy-ssa-field-manager", paramLabel = "NAME", defaultValue = "metacontroller",
      description = "As the engine is run with (default: ${DEFAULT-VALUE}).")
  String fieldManager;

  @Option(names = "--client-go-qps", paramLabel = "QPS", defaultValue = "50",
      description = "Sustained rate of API requests, reads and dry runs (default: ${DEFAULT-VALUE}, the engine's).")
  String qps;

  @Option(names = "--client-go-burst", paramLabel = "N", defaultValue = "100",
      description = "Burst of API requests (default: ${DEFAULT-VALUE}, the engine's).")
  String burst;

  @Option(names = "--concurrency", paramLabel = "N", defaultValue = "16",
      description = "Parents synced at once (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "60s",
      converter = EngineCommand.DurationConverter.class,
      description = "How long to wait for the controller's resources and caches, and each sync for the informers of"
          + " its related objects (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--color", paramLabel = "WHEN", defaultValue = "auto",
      description = "Colour the text output: auto (on a terminal, unless NO_COLOR is set), always or never.")
  String color;

  /**
   * How a preview process logs (set by {@code Main} before it runs): warnings and errors only, as plain lines on
   * stderr, so that stdout holds the preview alone.
   */
  public static final LogSettings LOGGING = LogSettings.fromZapFlags("warn", false, "console", null, null);

  private final PrintWriter out;
  private final PrintWriter err;

  private PreviewCommand(PrintWriter out, PrintWriter err) {
    this.out = out;
    this.err = err;
  }

  /** Parses {@code args} (what follows {@code preview}) and runs; returns the exit code. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    return ToolCommand.execute(new PreviewCommand(out, err), "preview", args, out, err);
  }

  @Override
  public Integer call() throws IOException {
    if ((controller == null) == (file == null)) {
      return fail(err, "give the controller: --controller KIND/NAME or -f FILE (one of them)");
    }
    if (all && parent != null) {
      return fail(err, "--parent and --all exclude each other");
    }
    if (!List.of("text", "json", "yaml").contains(output)) {
      return fail(err, "-o must be text, json or yaml, got " + output);
    }
    if (!List.of("auto", "always", "never").contains(color)) {
      return fail(err, "--color must be auto, always or never, got " + color);
    }
    Preview.Request request = request();
    AtomicReference<EngineOptions> parsed = new AtomicReference<>();
    int parsing = EngineCommand.execute(engineFlags(), options -> {
      parsed.set(options);
      return 0;
    }, out, err);
    if (parsing != 0) {
      return PreviewReport.ERROR;
    }
    EngineOptions options = Objects.requireNonNull(parsed.get(), "set when parsing succeeded");
    Progress progress = new Progress(err, isTerminal());
    Preview.Result result = Preview.run(options, request, progress::total, progress::done);
    progress.end();
    out.print(switch (output) {
      case "json" -> PreviewReport.json(result);
      case "yaml" -> PreviewReport.yaml(result);
      default -> PreviewReport.text(result, color.equals("always") || color.equals("auto") && isTerminal()
          && System.getenv("NO_COLOR") == null);
    });
    out.flush();
    return PreviewReport.exitCode(result);
  }

  private Preview.Request request() throws IOException {
    if (file != null) {
      JsonNode read = YAMLMapper.builder().build().readTree(Files.readString(file));
      if (!(read instanceof ObjectNode object)) {
        throw new IllegalArgumentException(file + " does not hold a controller object");
      }
      ControllerKind kind = Preview.kind(object.path("kind").asString(""));
      ObjectNode asJson = (ObjectNode) KubeJson.mapper().readTree(KubeJson.bytes(object));
      return new Preview.Request(kind, null, asJson, hookUrl, parent, concurrency, timeout);
    }
    String reference = Objects.requireNonNull(controller);
    int slash = reference.indexOf('/');
    if (slash <= 0 || slash == reference.length() - 1) {
      throw new IllegalArgumentException("--controller must be KIND/NAME, got " + reference);
    }
    return new Preview.Request(Preview.kind(reference.substring(0, slash)), reference.substring(slash + 1), null,
        hookUrl, parent, concurrency, timeout);
  }

  /** The engine's own flags for what the preview builds: the engine parses and checks them as it would. */
  private String[] engineFlags() {
    return new String[] {"--kubeconfig=" + kubeconfig, "--apply-strategy=" + applyStrategy,
        "--apply-strategy-ssa-field-manager=" + fieldManager, "--client-go-qps=" + qps, "--client-go-burst=" + burst,
        "--workers=" + concurrency, "--metrics-address=0", "--health-probe-bind-address=0"};
  }

  private static boolean isTerminal() {
    return System.console() != null;
  }

  private static int fail(PrintWriter err, String message) {
    return ToolCommand.fail(err, "preview", message);
  }

  /** Parents done of all, on one line of a terminal's stderr; nothing when stderr is not a terminal. */
  private static final class Progress {
    private static final int WIDTH = 30;
    private final PrintWriter err;
    private final boolean shown;
    private final AtomicInteger total = new AtomicInteger();

    Progress(PrintWriter err, boolean shown) {
      this.err = err;
      this.shown = shown;
    }

    void total(int parents) {
      total.set(parents);
    }

    synchronized void done(int done) {
      int all = total.get();
      if (!shown || all == 0) {
        return;
      }
      int filled = done * WIDTH / all;
      err.print(String.format(Locale.ROOT, "\r[%s%s] %d/%d parents", "=".repeat(filled), " ".repeat(WIDTH - filled),
          done, all));
      err.flush();
    }

    synchronized void end() {
      if (shown && total.get() > 0) {
        err.print("\r" + " ".repeat(WIDTH + 30) + "\r");
        err.flush();
      }
    }
  }
}
