package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeConfig;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A scripted stand-in for the API server's list and watch of one collection, for testing the informer's protocol
 * handling (pages, bookmarks, 410 Gone, watches the server ends) without a cluster: each list page and each watch
 * is answered from what the test queued, and every request is recorded.
 */
final class FakeApiServer implements AutoCloseable {

  /**
   * One watch: the lines it sends, and whether the server then ends it or keeps it open; or, when {@code refused}
   * is not 0, that HTTP status instead (with {@code Retry-After: retryAfter} when it is not negative).
   */
  record Watch(List<String> lines, boolean end, Sinks.Many<String> more, int refused, int retryAfter) {
    static Watch ending(String... lines) {
      return new Watch(List.of(lines), true, null, 0, -1);
    }

    static Watch open(Sinks.Many<String> more, String... lines) {
      return new Watch(List.of(lines), false, more, 0, -1);
    }

    static Watch refused(int code, int retryAfterSeconds) {
      return new Watch(List.of(), true, null, code, retryAfterSeconds);
    }
  }

  private final DisposableServer server;
  /** List pages by continue token ("" for the first); a token answers its queued pages in turn, the last one for good.
   * */
  private final Map<String, java.util.Deque<String>> pages = new ConcurrentHashMap<>();
  private final BlockingQueue<Watch> watches = new LinkedBlockingQueue<>();
  final List<Map<String, List<String>>> requests = new CopyOnWriteArrayList<>();
  /** When each of {@link #requests} came ({@link System#nanoTime}). */
  final List<Long> requestTimes = new CopyOnWriteArrayList<>();

  FakeApiServer(String path) {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.get(path, this::answer))
        .bindNow();
  }

  /** A connection to this server, through a kubeconfig as the engine gets one. */
  KubeApi api() {
    try {
      java.nio.file.Path kubeconfig = java.nio.file.Files.createTempFile("fake-api", ".kubeconfig");
      kubeconfig.toFile().deleteOnExit();
      java.nio.file.Files.writeString(kubeconfig, "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
          + "clusters:\n- name: fake\n  cluster: {server: 'http://127.0.0.1:" + server.port() + "'}\n"
          + "users:\n- name: fake\n  user: {}\ncontexts:\n- name: fake\n  context: {cluster: fake, user: fake}\n");
      return new KubeApi(KubeConfig.load(kubeconfig.toString()), 4);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Queues the answer to a list request with this continue token ({@code ""} for the first page). */
  void page(String continueToken, String body) {
    pages.computeIfAbsent(continueToken, t -> new java.util.concurrent.ConcurrentLinkedDeque<>()).add(body);
  }

  void watch(Watch watch) {
    watches.add(watch);
  }

  private org.reactivestreams.Publisher<Void> answer(HttpServerRequest request, HttpServerResponse response) {
    Map<String, List<String>> query = new QueryStringDecoder(request.uri()).parameters();
    requestTimes.add(System.nanoTime());
    requests.add(query);
    if (query.containsKey("watch")) {
      Watch watch = watches.poll();
      if (watch == null) {
        return response.status(HttpResponseStatus.OK).sendString(Flux.never());
      }
      if (watch.refused() != 0) {
        if (watch.retryAfter() >= 0) {
          response.header("Retry-After", Integer.toString(watch.retryAfter()));
        }
        return response.status(watch.refused()).sendString(Mono.just("{\"kind\":\"Status\",\"code\":"
            + watch.refused() + ",\"message\":\"storage is (re)initializing\"}"));
      }
      Flux<String> lines = Flux.fromIterable(watch.lines()).map(line -> line + "\n");
      if (!watch.end()) {
        lines = lines.concatWith(watch.more().asFlux().map(line -> line + "\n"));
      }
      return response.status(HttpResponseStatus.OK).header("Content-Type", "application/json")
          .sendString(lines, StandardCharsets.UTF_8);
    }
    String token = query.getOrDefault("continue", List.of("")).get(0);
    java.util.Deque<String> queued = pages.get(token);
    String body = queued == null ? null : queued.size() > 1 ? queued.poll() : queued.peek();
    if (body == null) {
      return response.status(HttpResponseStatus.GONE).sendString(Mono.just("{\"kind\":\"Status\",\"code\":410}"));
    }
    return response.status(HttpResponseStatus.OK).header("Content-Type", "application/json")
        .sendString(Mono.just(body));
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
