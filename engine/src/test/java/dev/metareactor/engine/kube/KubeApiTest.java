package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.testing.StandInApi;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The connection's own rules against a stand-in API server: a watch refused with 401 reads the credentials again,
 * and a request that is not a read asks the {@link WriteFence} before it is sent, including after it waited for a
 * connection.
 */
class KubeApiTest {

  @TempDir
  Path dir;

  /** Every request the stand-in received: {@code <method> <path> <Authorization>}. */
  private final List<String> received = new CopyOnWriteArrayList<>();
  /** What {@code GET /slow} waits for before it answers. */
  private final Sinks.One<String> slowAnswer = Sinks.one();
  private DisposableServer server;
  private KubeApi api;

  /** A stand-in: {@code Bearer old} is refused (401), {@code /slow} answers when told, the rest 200. */
  private KubeApi start(int connections) throws Exception {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((request, response) -> {
          String authorization = request.requestHeaders().get("Authorization");
          received.add(request.method().name() + " " + request.uri() + " " + authorization);
          if ("Bearer old".equals(authorization)) {
            return response.status(401).sendString(Mono.just("{\"kind\":\"Status\",\"code\":401}"));
          }
          Mono<String> body = request.uri().startsWith("/slow") ? slowAnswer.asMono() : Mono.just("{}");
          return response.status(200).sendString(body);
        })
        .bindNow();
    Files.writeString(dir.resolve("token"), "old");
    api = StandInApi.connect(server.port(), "{tokenFile: '" + dir.resolve("token") + "'}", connections);
    return api;
  }

  @AfterEach
  void stop() {
    if (api != null) {
      api.close();
    }
    if (server != null) {
      server.disposeNow();
    }
  }

  /**
   * A cache that only watches (no list, no write) must not retry with a token the server refuses until the next
   * periodic re-read: the 401 of a watch reads the token file again before the watch fails.
   */
  @Test
  void aWatchRefusedWith401ReadsTheRotatedTokenBeforeItFails() throws Exception {
    KubeApi kube = start(2);
    Files.writeString(dir.resolve("token"), "new");

    assertThatThrownBy(() -> kube.watch("/api/v1/configmaps?watch=1").blockLast(Duration.ofSeconds(10)))
        .isInstanceOf(ApiException.class).hasMessageContaining("401");
    assertThat(kube.config().authorization()).isEqualTo("Bearer new");
    assertThat(kube.watch("/api/v1/configmaps?watch=1").collectList().block(Duration.ofSeconds(10)))
        .as("the next watch, with the new token").hasSize(1);
  }

  @Test
  void aFencedWriteIsNotSentAndReadsStillAre() throws Exception {
    KubeApi kube = start(2);
    Files.writeString(dir.resolve("token"), "new");
    kube.config().refreshCredentials();
    kube.fenceWrites(() -> "the lease is gone");

    assertThatThrownBy(() -> kube.send("PATCH", "/api/v1/namespaces/a/configmaps/b", KubeApi.JSON, new byte[] {'{',
        '}'}).block(Duration.ofSeconds(10)))
        .isInstanceOf(WriteFence.Refused.class).hasMessageContaining("the lease is gone");
    assertThat(kube.send("GET", "/api/v1/namespaces/a/configmaps/b", null, null).block(Duration.ofSeconds(10)))
        .isNotNull();
    assertThat(received).containsExactly("GET /api/v1/namespaces/a/configmaps/b Bearer new");
  }

  /**
   * A write that waited for a connection while the fence closed (a process stopped with its requests queued, and
   * woken up after its lease expired) is asked again once it has the connection, and is not sent.
   */
  @Test
  void aWriteThatWaitedForAConnectionIsAskedAgainBeforeItIsSent() throws Exception {
    KubeApi kube = start(1);
    Files.writeString(dir.resolve("token"), "new");
    kube.config().refreshCredentials();
    AtomicReference<String> refusal = new AtomicReference<>();
    kube.fenceWrites(refusal::get);

    Mono<byte[]> holdsTheConnection = kube.send("GET", "/slow", null, null).cache();
    holdsTheConnection.subscribe();
    awaitReceived(1);
    Mono<byte[]> waiting = kube.send("PATCH", "/api/v1/namespaces/a/configmaps/b", KubeApi.JSON, new byte[] {'{',
        '}'}).cache();
    waiting.subscribe(ignored -> { }, ignored -> { });
    refusal.set("the lease expired while it waited");
    slowAnswer.tryEmitValue("{}");

    assertThatThrownBy(() -> waiting.block(Duration.ofSeconds(10)))
        .isInstanceOf(WriteFence.Refused.class).hasMessageContaining("expired while it waited");
    assertThat(holdsTheConnection.block(Duration.ofSeconds(10))).isNotNull();
    assertThat(received).containsExactly("GET /slow Bearer new");
  }

  private void awaitReceived(int count) {
    await().atMost(Duration.ofSeconds(10)).until(() -> received.size() >= count);
  }
}
