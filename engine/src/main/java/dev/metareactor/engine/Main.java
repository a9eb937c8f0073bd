package dev.metareactor.engine;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.cli.PreviewCommand;
import dev.metareactor.engine.cli.ReplayCommand;
import dev.metareactor.engine.cli.WhyCommand;
import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.server.Engine;
import dev.metareactor.engine.server.LogConfiguration;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * {@code java -jar metareactor.jar [flags]}: parses the flags, runs the engine until SIGTERM or SIGINT, then shuts
 * down gracefully. {@code java -jar metareactor.jar preview [flags]} runs {@link PreviewCommand} instead, and
 * {@code replay} {@link ReplayCommand}, {@code why} {@link WhyCommand}.
 *
 * <p>Exit codes: 0 after a signal-initiated shutdown, 1 when the engine cannot start or must stop (the API server
 * never answered, the leader lease was lost), 2 for a bad command line.
 */
public final class Main {

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);
  /** Exit code when the engine cannot start or had to stop. */
  static final int FAILED = 1;
  private static final String FATAL = "fatal: ";
  /** The subcommand that shows what a controller would write ({@code metareactor preview --help}). */
  private static final String PREVIEW = "preview";
  /** The subcommand that asks a hook the recorded syncs again ({@code metareactor replay --help}). */
  private static final String REPLAY = "replay";
  /** The subcommand that shows why a parent was synced ({@code metareactor why --help}). */
  private static final String WHY = "why";

  private Main() {}

  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    if (args.length > 0 && args[0].equals(PREVIEW)) {
      LogConfiguration.apply(PreviewCommand.LOGGING);
      System.exit(PreviewCommand.execute(Arrays.copyOfRange(args, 1, args.length), out, err));
    }
    if (args.length > 0 && args[0].equals(REPLAY)) {
      LogConfiguration.apply(PreviewCommand.LOGGING);
      System.exit(ReplayCommand.execute(Arrays.copyOfRange(args, 1, args.length), out, err));
    }
    if (args.length > 0 && args[0].equals(WHY)) {
      LogConfiguration.apply(PreviewCommand.LOGGING);
      System.exit(WhyCommand.execute(Arrays.copyOfRange(args, 1, args.length), out, err));
    }
    System.exit(EngineCommand.execute(args, Main::run, out, err));
  }

  static int run(EngineOptions options) {
    LogConfiguration.apply(options.logging());
    CompletableFuture<String> stop = new CompletableFuture<>();
    // Handled signals instead of a shutdown hook: a hook cannot choose the exit code (the JVM exits 143 after
    // SIGTERM), and Kubernetes, systemd and the quick start treat a clean stop as exit 0.
    for (String signal : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(signal), received -> stop.complete("SIG" + received.getName()));
    }
    Engine engine;
    try {
      engine = Engine.start(options);
    } catch (RuntimeException e) {
      LOG.error("cannot start: {}", e.getMessage(), e);
      return FAILED;
    }
    engine.fatalError().thenAccept(reason -> stop.complete(FATAL + reason));
    String reason = stop.join();
    boolean failed = reason.startsWith(FATAL);
    if (failed) {
      // Metacontroller's last line when it must end (a lost lease): the same words, at error.
      LOG.atError().setMessage("Terminating").addKeyValue("error", reason.substring(FATAL.length())).log();
    } else {
      LOG.info("stopping ({})", reason);
    }
    engine.close();
    return failed ? FAILED : 0;
  }
}
