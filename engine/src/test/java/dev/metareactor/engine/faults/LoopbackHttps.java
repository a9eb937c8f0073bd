package dev.metareactor.engine.faults;

import dev.metareactor.http.tls.Pem;
import dev.metareactor.http.tls.TestCerts;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.function.BiFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * An HTTPS server the API server calls back on loopback ({@code https://localhost:<port>}), with the test CA's
 * certificate for {@code localhost} ({@link TestCerts}): an admission webhook's or an aggregated API's stand-in.
 * It can be stopped and started again on the same port.
 */
class LoopbackHttps implements AutoCloseable {

  private final BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler;
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private volatile int port;
  private volatile DisposableServer server;

  LoopbackHttps(BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> handler) {
    this.handler = handler;
  }

  /** Serves on the port it had, or a free one the first time. */
  synchronized LoopbackHttps start() {
    if (server == null) {
      try {
        TestCerts.Pair cert = TestCerts.shared().server();
        var ssl = SslContextBuilder.forServer(Pem.privateKey(cert.keyPem(), "server key"),
            Pem.certificates(cert.certificatePem(), "server certificate").toArray(X509Certificate[]::new)).build();
        server = HttpServer.create().host("127.0.0.1").port(port).secure(spec -> spec.sslContext(ssl))
            .channelGroup(connections).handle(handler).bindNow();
        port = server.port();
      } catch (Exception e) {
        throw new IllegalStateException("cannot serve HTTPS on loopback", e);
      }
    }
    return this;
  }

  /**
   * Stops serving and drops the open connections at once (the API server's kept-alive ones and its watches, which
   * would otherwise go on being served); {@link #start} serves again on the same port.
   */
  synchronized void stop() {
    if (server != null) {
      server.dispose();
      connections.close().awaitUninterruptibly();
      server.onDispose().block(Duration.ofSeconds(10));
      server = null;
    }
  }

  int port() {
    return port;
  }

  /** {@code https://localhost:<port><path>}. */
  String url(String path) {
    return "https://localhost:" + port + path;
  }

  /** The CA that signed the certificate, base64 as a {@code caBundle}. */
  static String caBundle() {
    try {
      return Base64.getEncoder().encodeToString(TestCerts.shared().caPem().getBytes(StandardCharsets.UTF_8));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Answers {@code status} with {@code json}. */
  static Mono<Void> json(HttpServerResponse response, int status, String json) {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    return response.status(status).header("Content-Type", "application/json")
        .header("Content-Length", Integer.toString(bytes.length)).sendByteArray(Mono.just(bytes)).then();
  }

  @Override
  public void close() {
    stop();
  }
}
