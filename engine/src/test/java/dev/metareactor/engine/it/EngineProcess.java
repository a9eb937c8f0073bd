package dev.metareactor.engine.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The runnable jar as a user runs it, with the JVM flags {@code engine/bin/metareactor} and the image give it
 * ({@code java @src/main/jvm/jvm.options -jar target/metareactor.jar [flags]}; without the launcher's class-data
 * archive, which only makes the start faster), in a process of its own whose output (stdout and stderr) goes to a file
 * the test reads.
 */
public final class EngineProcess implements AutoCloseable {

  private static final Path JAR = Path.of("target", "metareactor.jar");
  private static final Path JVM_OPTIONS = Path.of("src", "main", "jvm", "jvm.options");
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final Process process;
  private final Path log;

  private EngineProcess(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** Starts the jar with {@code flags}; its output goes to {@code log}. */
  public static EngineProcess start(Path log, String... flags) {
    return start(log, Map.of(), flags);
  }

  /** Starts the jar with {@code flags} and {@code env} added to this JVM's environment. */
  public static EngineProcess start(Path log, Map<String, String> env, String... flags) {
    assertThat(JAR).as("built by the package phase").exists();
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "@" + JVM_OPTIONS, "-jar",
        JAR.toString()));
    command.addAll(List.of(flags));
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      builder.environment().putAll(env);
      return new EngineProcess(builder.start(), log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Everything the process wrote so far. */
  public String output() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The lines written so far. */
  public List<String> lines() {
    return output().lines().toList();
  }

  /** The JSON lines written so far (the engine's log in its default format), parsed; other lines are skipped. */
  public List<JsonNode> jsonLines() {
    List<JsonNode> parsed = new ArrayList<>();
    for (String line : lines()) {
      if (line.startsWith("{")) {
        try {
          parsed.add(JSON.readTree(line));
        } catch (JacksonException e) {
          // a line cut short by a read racing the write: the next read sees it whole
        }
      }
    }
    return parsed;
  }

  /**
   * For a failure message: "running", or how the process ended and the last lines it wrote (an engine that could not
   * start says why there).
   */
  public String state() {
    if (process.isAlive()) {
      return "running";
    }
    List<String> lines = lines();
    return "exited " + process.exitValue() + "; its last lines:\n"
        + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
  }

  /** Sends SIGTERM. */
  public void terminate() {
    process.destroy();
  }

  /** Waits up to {@code seconds} for the process to end; its exit code, or {@code null} while it still runs. */
  public Integer awaitExit(long seconds) throws InterruptedException {
    return process.waitFor(seconds, TimeUnit.SECONDS) ? process.exitValue() : null;
  }

  /** Stops the process with SIGSTOP: it keeps its connections and reads nothing until {@link #resume}. */
  public void pause() {
    signal("STOP");
  }

  /** Lets a {@link #pause paused} process go on (SIGCONT). */
  public void resume() {
    signal("CONT");
  }

  /** Whether the process still runs. */
  public boolean isAlive() {
    return process.isAlive();
  }

  private void signal(String signal) {
    signal(process.pid(), signal);
  }

  /** Sends {@code signal} ({@code TERM}, {@code STOP}, ...) to process {@code pid}. */
  public static void signal(long pid, String signal) {
    try {
      int exit = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start().waitFor();
      assertThat(exit).as("kill -%s %d", signal, pid).isZero();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Kills the process if it still runs. */
  @Override
  public void close() {
    process.destroyForcibly();
  }
}
