package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * A hook server for tests that answers from a script: the n-th request gets the n-th reply, the last reply repeats.
 * Records every request and counts connections.
 */
final class ScriptedServer implements AutoCloseable {

  /** A request as the server saw it; {@code uri} is the request target (path and query). */
  record Seen(HttpHeaders headers, String body, String uri) {}

  /** How to answer one request. */
  @FunctionalInterface
  interface Reply {
    Publisher<Void> send(HttpServerRequest request, HttpServerResponse response);
  }

  private volatile List<Reply> replies;
  private final AtomicInteger next = new AtomicInteger();
  private final List<Seen> seen = new CopyOnWriteArrayList<>();
  private final Semaphore received = new Semaphore(0);
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger maxOpen = new AtomicInteger();
  private final AtomicInteger opened = new AtomicInteger();
  private final AtomicInteger closed = new AtomicInteger();
  private final DisposableServer server;
  private final boolean secure;

  private ScriptedServer(HttpServer base, boolean secure, Reply... script) {
    this.replies = List.of(script);
    this.secure = secure;
    this.server = base.host("127.0.0.1").port(0)
        .doOnChannelInit((observer, channel, remote) -> {
          opened.incrementAndGet();
          maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
          channel.closeFuture().addListener(future -> {
            open.decrementAndGet();
            closed.incrementAndGet();
          });
        })
        .handle((request, response) -> request.receive().aggregate().asString(StandardCharsets.UTF_8)
            .defaultIfEmpty("")
            .flatMap(body -> {
              seen.add(new Seen(request.requestHeaders().copy(), body, request.uri()));
              received.release();
              return Mono.from(reply().send(request, response));
            }))
        .bindNow();
  }

  static ScriptedServer start(Reply... script) {
    return new ScriptedServer(HttpServer.create(), false, script);
  }

  static ScriptedServer startSecure(SslContext context, Reply... script) {
    return new ScriptedServer(HttpServer.create().secure(ssl -> ssl.sslContext(context)), true, script);
  }

  /** Replaces the script; the next request gets the first of these replies. */
  void serve(Reply... script) {
    replies = List.of(script);
    next.set(0);
  }

  private Reply reply() {
    List<Reply> current = replies;
    return current.get(Math.min(next.getAndIncrement(), current.size() - 1));
  }

  String url(String path) {
    return (secure ? "https://localhost:" : "http://127.0.0.1:") + port() + path;
  }

  int port() {
    return ((InetSocketAddress) server.address()).getPort();
  }

  List<Seen> requests() {
    return List.copyOf(seen);
  }

  /** Waits (up to 10 s) until one more request has arrived than the last wait accounted for. */
  void awaitRequest() throws InterruptedException {
    assertThat(received.tryAcquire(10, TimeUnit.SECONDS)).as("a request arrived").isTrue();
  }

  int connectionsOpened() {
    return opened.get();
  }

  /** Connections closed so far, by either side; this server never closes one on its own. */
  int connectionsClosed() {
    return closed.get();
  }

  int maxOpenConnections() {
    return maxOpen.get();
  }

  @Override
  public void close() {
    server.disposeNow(Duration.ofSeconds(5));
  }

  static Reply status(int code, String body, String... headers) {
    return (request, response) -> {
      response.status(code);
      for (int i = 0; i + 1 < headers.length; i += 2) {
        response.header(headers[i], headers[i + 1]);
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      return response.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(bytes.length))
          .send(Mono.just(Unpooled.wrappedBuffer(bytes)));
    };
  }

  static Reply ok(String json, String... headers) {
    return status(200, json, headers);
  }

  /** A 200 answer in many chunks without a Content-Length. */
  static Reply chunked(String body, int chunkSize) {
    return (request, response) -> {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      return response.chunkedTransfer(true).send(Flux.range(0, (bytes.length + chunkSize - 1) / chunkSize)
          .map(i -> Unpooled.wrappedBuffer(bytes, i * chunkSize, Math.min(chunkSize, bytes.length - i * chunkSize))));
    };
  }

  /** Never answers. */
  static Reply silent() {
    return (request, response) -> Mono.never();
  }

  /** Answers with {@code then} once {@code gate} completes. */
  static Reply after(Mono<?> gate, Reply then) {
    return (request, response) -> gate.then(Mono.from(then.send(request, response)));
  }
}
