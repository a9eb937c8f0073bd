package dev.metareactor.engine.cli;

import dev.metareactor.engine.preview.Replay;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code metareactor replay --hook-url URL DIR}: the syncs recorded under {@code DIR} ({@code --record-syncs}) asked
 * again of a hook, and which answers would now make different writes ({@link Replay}). Exit codes: 0 every answer the
 * same, 1 one differs, 2 a call failed, a file is not a record, or a bad command line.
 */
@Command(
    name = "metareactor replay",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {"Sends every sync recorded under DIR (by the engine's --record-syncs) to a hook again and reports "
        + "the answers that would now make different writes. Needs no cluster.",
        "Exit code: 0 every answer is the same, 1 one differs, 2 a hook call failed or a file is not a record."})
public final class ReplayCommand implements Callable<Integer> {

  @Option(names = "--hook-url", paramLabel = "URL", required = true, description = "The hook to ask.")
  String hookUrl;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text",
      description = "text, json or yaml (default: ${DEFAULT-VALUE}).")
  String output;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = EngineCommand.DurationConverter.class,
      description = "How long one hook call may take (default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Parameters(paramLabel = "DIR", description = "The recorded syncs: --record-syncs' directory, or a part of it.")
  @Nullable Path dir;

  private final PrintWriter out;
  private final PrintWriter err;

  private ReplayCommand(PrintWriter out, PrintWriter err) {
    this.out = out;
    this.err = err;
  }

  /** Parses {@code args} (what follows {@code replay}) and runs; returns the exit code. */
  public static int execute(String[] args, PrintWriter out, PrintWriter err) {
    return ToolCommand.execute(new ReplayCommand(out, err), "replay", args, out, err);
  }

  @Override
  public Integer call() throws IOException {
    if (!List.of("text", "json", "yaml").contains(output)) {
      return ToolCommand.fail(err, "replay", "-o must be text, json or yaml, got " + output);
    }
    Path dir = Objects.requireNonNull(this.dir, "DIR is required");
    if (!Files.isDirectory(dir)) {
      return ToolCommand.fail(err, "replay", dir + " is not a directory");
    }
    URI hook = URI.create(hookUrl);
    List<Replay.Result> results = Replay.run(dir, hook, timeout, done -> { });
    out.print(Replay.render(results, output));
    out.flush();
    return Replay.exitCode(results);
  }
}
