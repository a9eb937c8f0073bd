package dev.metareactor.engine.cli;

import dev.metareactor.engine.kube.ApiException;
import java.io.PrintWriter;
import picocli.CommandLine;

/**
 * How the launcher's tools ({@code metareactor preview}, {@code replay}, {@code why}) run: picocli over the command,
 * its output and errors on the writers given (so that tests read them), and every error, a bad command line or a
 * failure while running, printed as one line {@code metareactor <tool>: <message>} with the exit code {@value #ERROR},
 * which each tool's own codes leave for "no answer".
 */
final class ToolCommand {

  /** The exit code of an error: the same for every tool. */
  static final int ERROR = 2;

  private ToolCommand() {}

  /** Runs {@code command} (a picocli command, named {@code tool} in its errors) on {@code args}; its exit code. */
  static int execute(Object command, String tool, String[] args, PrintWriter out, PrintWriter err) {
    CommandLine commandLine = new CommandLine(command);
    commandLine.setOut(out);
    commandLine.setErr(err);
    commandLine.setParameterExceptionHandler((ex, ignored) -> fail(err, tool, ex.getMessage() + " (see --help)"));
    commandLine.setExecutionExceptionHandler((ex, cl, parseResult) -> fail(err, tool, message(ex)));
    return commandLine.execute(args);
  }

  /** Prints {@code metareactor <tool>: <message>} on one line; returns {@value #ERROR}. */
  static int fail(PrintWriter err, String tool, String message) {
    err.println("metareactor " + tool + ": " + message.replaceAll("\\s*\\R\\s*", " ").strip());
    err.flush();
    return ERROR;
  }

  /** What a failure says: its own message, or its first cause's that has one. */
  static String message(Throwable error) {
    Throwable cause = error;
    while (cause.getCause() != null && cause.getMessage() == null) {
      cause = cause.getCause();
    }
    if (ApiException.codeOf(cause) == 404) {
      return "not found: " + cause.getMessage();
    }
    return cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage();
  }
}
