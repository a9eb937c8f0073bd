package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.FAST;
import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.SYNC;
import static dev.metareactor.http.Fixtures.json;
import static dev.metareactor.http.Fixtures.succeed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.node.ObjectNode;

class HookServerTest {

  private final HookClient client = HookClient.create(FAST, new SimpleMeterRegistry());
  private final HttpClient http = HttpClient.newHttpClient();
  private HookServer server;

  @AfterEach
  void tearDown() {
    client.close();
    if (server != null) {
      server.close();
    }
  }

  private HttpResponse<String> send(String method, String path, String body) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create(server.url(path)))
        .method(method, BodyPublishers.ofString(body))
        .build();
    return http.send(request, BodyHandlers.ofString());
  }

  private static ObjectNode echo(tools.jackson.databind.JsonNode request) {
    ObjectNode answer = Fixtures.JSON.createObjectNode();
    answer.set("seen", request);
    return answer;
  }

  @Test
  void routesCallsToTheirFunctions() {
    server = HookServer.builder()
        .route("/sync", HookServerTest::echo)
        .route("/finalize", request -> json("{\"finalized\":true}"))
        .start();

    Hook sync = client.hook(WebhookSpec.of(server.url("/sync")), SYNC);
    Hook finalize = client.hook(WebhookSpec.of(server.url("/finalize")),
        new HookIdentity("finalize", "test-controller", "CompositeController"));

    assertThat(succeed(sync.call(json("{\"a\":1}"), ROOT)).body()).isEqualTo(json("{\"seen\":{\"a\":1}}"));
    assertThat(succeed(finalize.call(json("{}"), ROOT)).body()).isEqualTo(json("{\"finalized\":true}"));
    assertThat(server.port()).isPositive();
  }

  @Test
  void answersMistakesWithTheRightStatus() throws Exception {
    server = HookServer.builder()
        .route("/sync", HookServerTest::echo)
        .route("/broken", request -> {
          throw new IllegalStateException("hook bug");
        })
        .start();

    assertThat(send("POST", "/nowhere", "{}").statusCode()).isEqualTo(404);
    HttpResponse<String> get = send("GET", "/sync", "");
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(get.headers().firstValue("Allow")).hasValue("POST");
    HttpResponse<String> notJson = send("POST", "/sync", "{oops");
    assertThat(notJson.statusCode()).isEqualTo(400);
    assertThat(notJson.body()).startsWith("request is not JSON");
    assertThat(send("POST", "/sync", "").statusCode()).isEqualTo(400);
    HttpResponse<String> broken = send("POST", "/broken", "{}");
    assertThat(broken.statusCode()).isEqualTo(500);
    assertThat(broken.body()).isEqualTo("hook bug");
  }

  @Test
  void aRequestBodyOverTheLimitGets413WithoutBeingBuffered() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    server = HookServer.builder().maxRequestBytes(1000).route("/sync", request -> {
      calls.incrementAndGet();
      return echo(request);
    }).start();
    String big = "{\"a\":\"" + "x".repeat(5000) + "\"}";

    // Refused on its Content-Length, and as it streams in without one (chunked).
    HttpResponse<String> declared = send("POST", "/sync", big);
    HttpResponse<String> streamed = http.send(HttpRequest.newBuilder(URI.create(server.url("/sync")))
        .POST(BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8))))
        .build(), BodyHandlers.ofString());

    for (HttpResponse<String> response : List.of(declared, streamed)) {
      assertThat(response.statusCode()).isEqualTo(413);
      assertThat(response.body()).isEqualTo("request body exceeds the limit of 1000 bytes");
    }
    assertThat(calls).as("the hook never saw them").hasValue(0);
    assertThat(send("POST", "/sync", "{\"a\":1}").statusCode()).isEqualTo(200);
    assertThat(HookServer.DEFAULT_MAX_REQUEST_BYTES).isEqualTo(32L << 20);
  }

  @Test
  void withEtagsAnUnchangedAnswerIsNotModified() {
    server = HookServer.builder().etags(true).route("/sync", request -> json("{\"children\":[]}")).start();
    Hook hook = client.hook(WebhookSpec.of(server.url("/sync")).withEtag(new EtagSettings(true, null, null)), SYNC);

    HookResponse first = succeed(hook.call(json("{}"), ROOT));
    HookResponse second = succeed(hook.call(json("{}"), ROOT));

    assertThat(first.cached()).isFalse();
    assertThat(second.cached()).isTrue();
    assertThat(second.body()).isEqualTo(json("{\"children\":[]}"));
  }

  @Test
  void closingLetsCallsInFlightFinish() throws Exception {
    CountDownLatch arrived = new CountDownLatch(1);
    Sinks.Empty<Void> release = Sinks.empty();
    server = HookServer.builder()
        .routeAsync("/slow", request -> {
          arrived.countDown();
          return release.asMono().then(Mono.just(json("{\"done\":true}")));
        })
        .start();
    Hook hook = client.hook(WebhookSpec.of(server.url("/slow")), SYNC);

    CompletableFuture<HookResponse> call = hook.call(json("{}"), ROOT).toFuture();
    assertThat(arrived.await(10, TimeUnit.SECONDS)).isTrue();
    int port = server.port();
    CompletableFuture<Void> closing = CompletableFuture.runAsync(server::close);
    await().atMost(Duration.ofSeconds(10)).until(() -> refusesConnections(port));
    assertThat(closing).as("close waits for the call in flight").isNotDone();
    release.tryEmitEmpty();

    assertThat(call.get(10, TimeUnit.SECONDS).body()).isEqualTo(json("{\"done\":true}"));
    closing.get(15, TimeUnit.SECONDS);
    server = null;
  }

  private static boolean refusesConnections(int port) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      return !socket.isConnected();
    } catch (IOException e) {
      return true;
    }
  }

  @Test
  void validatesRoutes() {
    HookServer.Builder builder = HookServer.builder().route("/sync", request -> request);

    assertThatThrownBy(() -> builder.route("/sync", request -> request)).hasMessageContaining("already routed");
    assertThatThrownBy(() -> builder.route("sync", request -> request)).hasMessageContaining("must start with '/'");
    assertThatThrownBy(() -> HookServer.builder().start()).hasMessage("no routes");
    assertThatThrownBy(() -> builder.port(70_000)).hasMessageContaining("out of range");
  }
}
