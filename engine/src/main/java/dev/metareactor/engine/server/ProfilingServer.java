package dev.metareactor.engine.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * {@code --pprof-address}: where Metacontroller serves Go's pprof profiles, the JVM's equivalents, on request only and
 * read-only (GET; nothing can be changed through it), on the given address alone (a separate server from
 * {@code /metrics} and the probes, so {@code 127.0.0.1:6060} keeps it inside the pod):
 *
 * <ul>
 *   <li>{@code /debug/jfr?seconds=N}: a JDK Flight Recorder recording of the next N seconds (default 30, at most
 *       300) with JFR's {@code profile} settings (CPU samples every 10-20 ms, allocations, locks, I/O, GC), as a
 *       {@code .jfr} file for JDK Mission Control, IntelliJ or {@code jfr print}. One at a time: 429 while one
 *       runs. JFR keeps its chunks in {@code java.io.tmpdir} (the pod's {@code /tmp} volume); 503 if it cannot.</li>
 *   <li>{@code /debug/threads}: every thread's stack, with the locks held and waited for (as {@code jstack}).</li>
 * </ul>
 *
 * <p>Nothing is recorded, sampled or kept between requests: off, it costs nothing.
 */
public final class ProfilingServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ProfilingServer.class);
  static final Duration DEFAULT_RECORDING = Duration.ofSeconds(30);
  static final Duration LONGEST_RECORDING = Duration.ofMinutes(5);

  private final DisposableServer server;
  private final AtomicBoolean recording = new AtomicBoolean();

  private ProfilingServer(InetSocketAddress address) {
    this.server = HttpServer.create()
        .bindAddress(() -> address)
        .route(routes -> routes
            .get("/debug/jfr", this::recording)
            .get("/debug/threads", (request, response) -> response
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendString(Mono.fromCallable(ProfilingServer::threadDump).subscribeOn(Schedulers.boundedElastic()))))
        .bindNow();
    LOG.info("serving JDK Flight Recorder recordings (/debug/jfr?seconds=N) and thread dumps (/debug/threads) on {}",
        server.address());
  }

  /** Binds {@code address}. Blocks until bound; call it from the main thread, not an event loop. */
  public static ProfilingServer start(InetSocketAddress address) {
    return new ProfilingServer(address);
  }

  /** Where it listens (with the real port when bound to port 0). */
  public InetSocketAddress address() {
    return (InetSocketAddress) server.address();
  }

  @Override
  public void close() {
    server.disposeNow(Duration.ofSeconds(5));
  }

  private Publisher<Void> recording(HttpServerRequest request, HttpServerResponse response) {
    Duration length;
    try {
      length = length(new QueryStringDecoder(request.uri()).parameters().get("seconds"));
    } catch (IllegalArgumentException e) {
      return response.status(HttpResponseStatus.BAD_REQUEST).sendString(Mono.just(e.getMessage() + "\n"));
    }
    if (!recording.compareAndSet(false, true)) {
      return response.status(HttpResponseStatus.TOO_MANY_REQUESTS)
          .sendString(Mono.just("a recording is running; ask again when it is done\n"));
    }
    LOG.info("recording {} s with JDK Flight Recorder for {}", length.toSeconds(), request.remoteAddress());
    return Mono.fromCallable(ProfilingServer::startRecording)
        .subscribeOn(Schedulers.boundedElastic())
        .flatMap(started -> Mono.delay(length)
            .then(Mono.fromCallable(() -> finish(started)).subscribeOn(Schedulers.boundedElastic()))
            .doOnCancel(started::close))
        .flatMap(file -> Mono.from(response
                .header(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream")
                .header(HttpHeaderNames.CONTENT_DISPOSITION, "attachment; filename=\"metareactor.jfr\"")
                .sendFile(file))
            .doFinally(signal -> delete(file)))
        .onErrorResume(e -> !response.hasSentHeaders(), e -> {
          LOG.warn("a JDK Flight Recorder recording failed: {}", e.toString());
          return Mono.from(response.status(HttpResponseStatus.SERVICE_UNAVAILABLE)
              .sendString(Mono.just("cannot record: " + e + "\n")));
        })
        .doFinally(signal -> recording.set(false));
  }

  /** {@code seconds}: a whole number from 1 to 300; 30 when absent. */
  static Duration length(@Nullable List<String> seconds) {
    if (seconds == null || seconds.isEmpty()) {
      return DEFAULT_RECORDING;
    }
    long value;
    try {
      value = Long.parseLong(seconds.get(0));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("seconds=" + seconds.get(0) + " is not a whole number of seconds");
    }
    if (value < 1 || value > LONGEST_RECORDING.toSeconds()) {
      throw new IllegalArgumentException("seconds must be from 1 to " + LONGEST_RECORDING.toSeconds() + ", not "
          + value);
    }
    return Duration.ofSeconds(value);
  }

  private static Recording startRecording() throws IOException, ParseException {
    Recording started = new Recording(Configuration.getConfiguration("profile"));
    started.setName("metareactor --pprof-address");
    started.start();
    return started;
  }

  /** Stops the recording and writes it to a file of its own. */
  private static Path finish(Recording started) throws IOException {
    try (started) {
      started.stop();
      Path file = Files.createTempFile("metareactor-", ".jfr");
      started.dump(file);
      return file;
    }
  }

  private static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every live thread's stack and locks, in jstack's layout. */
  static String threadDump() {
    StringBuilder dump = new StringBuilder();
    for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      dump.append('"').append(thread.getThreadName()).append("\" #").append(thread.getThreadId())
          .append(thread.isDaemon() ? " daemon" : "").append(" prio=").append(thread.getPriority())
          .append("\n   java.lang.Thread.State: ").append(thread.getThreadState()).append('\n');
      StackTraceElement[] stack = thread.getStackTrace();
      for (int i = 0; i < stack.length; i++) {
        dump.append("\tat ").append(frame(stack[i])).append('\n');
        if (i == 0 && thread.getLockInfo() != null) {
          dump.append("\t- ").append(thread.getThreadState() == Thread.State.BLOCKED ? "blocked on " : "waiting on ")
              .append(thread.getLockInfo()).append('\n');
        }
        for (MonitorInfo monitor : thread.getLockedMonitors()) {
          if (monitor.getLockedStackDepth() == i) {
            dump.append("\t- locked ").append(monitor).append('\n');
          }
        }
      }
      LockInfo[] synchronizers = thread.getLockedSynchronizers();
      if (synchronizers.length > 0) {
        dump.append("\n   Locked ownable synchronizers:\n");
        for (LockInfo synchronizer : synchronizers) {
          dump.append("\t- ").append(synchronizer).append('\n');
        }
      }
      dump.append('\n');
    }
    return dump.toString();
  }

  /** A frame as jstack prints it: without {@link StackTraceElement#toString}'s class loader and module. */
  private static String frame(StackTraceElement frame) {
    String where = frame.isNativeMethod() ? "Native Method" : frame.getFileName() == null ? "Unknown Source"
        : frame.getLineNumber() >= 0 ? frame.getFileName() + ":" + frame.getLineNumber() : frame.getFileName();
    return frame.getClassName() + "." + frame.getMethodName() + "(" + where + ")";
  }
}
