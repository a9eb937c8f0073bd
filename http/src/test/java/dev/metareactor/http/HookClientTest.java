package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.FAST_RETRIES;
import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.START;
import static dev.metareactor.http.Fixtures.SYNC;
import static dev.metareactor.http.Fixtures.fail;
import static dev.metareactor.http.Fixtures.json;
import static dev.metareactor.http.Fixtures.options;
import static dev.metareactor.http.Fixtures.pool;
import static dev.metareactor.http.Fixtures.request;
import static dev.metareactor.http.Fixtures.succeed;
import static dev.metareactor.http.ScriptedServer.chunked;
import static dev.metareactor.http.ScriptedServer.ok;
import static dev.metareactor.http.ScriptedServer.silent;
import static dev.metareactor.http.ScriptedServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.http.HookCallException.Reason;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

class HookClientTest extends ScriptedHookTest {

  private Hook hook(ScriptedServer.Reply... script) {
    return hook(spec -> spec, script);
  }

  /** Replaces the client with one using this pool and fast retries. */
  private void usePool(HookClientOptions.Pool pool) {
    useOptions(options(pool, FAST_RETRIES, HookClientOptions.DEFAULTS.maxResponseBytes(), Duration.ZERO));
  }

  private double requests(String code) {
    return meters.get("metacontroller.sync.requests").tag("code", code).counter().count();
  }

  @Test
  void postsJsonAndReturnsTheParsedAnswer() {
    Hook hook = hook(ok("{\"children\":[{\"kind\":\"Pod\"}],\"status\":{\"ready\":1}}"));

    HookResponse response = succeed(hook.call(request(), ROOT));

    assertThat(response.body()).isEqualTo(json("{\"children\":[{\"kind\":\"Pod\"}],\"status\":{\"ready\":1}}"));
    assertThat(response.cached()).isFalse();
    assertThat(response.attempts()).isEqualTo(1);
    ScriptedServer.Seen seen = server.requests().get(0);
    assertThat(json(seen.body())).isEqualTo(request());
    assertThat(seen.headers().get("Content-Type")).isEqualTo("application/json");
    assertThat(seen.headers().get("If-None-Match")).isNull();
    assertThat(seen.headers().get("Authorization")).isNull();
    assertThat(requests("200")).isEqualTo(1.0);
    assertThat(meters.get("metacontroller.sync.request.duration.histogram").timer().count()).isEqualTo(1);
    assertThat(meters.get("metacontroller.sync.in.flight.requests").gauge().value()).isZero();
  }

  @Test
  void retriesA500AndSucceeds() {
    Hook hook = hook(status(500, "restarting"), ok("{\"ok\":true}"));

    HookResponse response = succeed(hook.call(request(), ROOT));

    assertThat(response.body()).isEqualTo(json("{\"ok\":true}"));
    assertThat(response.attempts()).isEqualTo(2);
    assertThat(server.requests()).hasSize(2);
    assertThat(server.requests().get(1).body()).isEqualTo(server.requests().get(0).body());
    assertThat(requests("500")).isEqualTo(1.0);
    assertThat(requests("200")).isEqualTo(1.0);
    assertThat(meters.get("metacontroller.sync.retries").counter().count()).isEqualTo(1.0);
  }

  @Test
  void retriesGatewayErrorsUntilAttemptsRunOut() {
    Hook hook = hook(status(502, "bad gateway"), status(503, "unavailable"), status(504, "gateway timeout"));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.STATUS);
    assertThat(failure.statusCode()).hasValue(504);
    assertThat(failure.isTransient()).isTrue();
    assertThat(failure.attempts()).isEqualTo(3);
    assertThat(failure.breakerState()).hasValue(CircuitBreaker.State.CLOSED);
    assertThat(failure).hasMessage("sync hook " + server.url("/sync")
        + ": unsupported status code: 504 body: gateway timeout (attempts: 3, circuit breaker: CLOSED)");
    assertThat(server.requests()).hasSize(3);
  }

  @Test
  void neverRetriesOtherClientErrors() {
    Hook hook = hook(status(404, "no such hook"), ok("{}"));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.STATUS);
    assertThat(failure.statusCode()).hasValue(404);
    assertThat(failure.isTransient()).isFalse();
    assertThat(failure.attempts()).isEqualTo(1);
    assertThat(failure.detail()).isEqualTo("unsupported status code: 404 body: no such hook");
    assertThat(server.requests()).hasSize(1);
  }

  @Test
  void anErrorPageIsCutToItsFirst256BytesOnOneLine() {
    Hook hook = hook(status(400, "x".repeat(5000)), status(500, "<html>\n  <body>\r\n\tfailed:\u001b[2J"
        + "\u202egnp.exe\u0000 " + "y".repeat(300)));

    HookCallException failure = fail(hook.call(request(), ROOT));
    HookCallException page = fail(hook.call(request(), ROOT));

    assertThat(failure.detail()).startsWith("unsupported status code: 400 body: xxx").endsWith("x...")
        .hasSize("unsupported status code: 400 body: ".length() + 256 + 3);
    // Line breaks, tabs, terminal escapes, a right-to-left override and NUL: one space each run, nothing else.
    assertThat(page.detail()).startsWith("unsupported status code: 500 body: <html> <body> failed: [2J gnp.exe yyy")
        .endsWith("y...").doesNotContain("\n", "\r", "\t", "\u001b", "\u202e", "\u0000");
  }

  @Test
  void connectionRefusedIsRetriedThenAClearError() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Hook hook = client.hook(WebhookSpec.of("http://127.0.0.1:" + port + "/sync"), SYNC);

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.TRANSPORT);
    assertThat(failure.isTransient()).isTrue();
    assertThat(failure.attempts()).isEqualTo(3);
    assertThat(failure.statusCode()).isEmpty();
    assertThat(failure.getMessage()).startsWith("sync hook http://127.0.0.1:" + port + "/sync: http error: ")
        .containsIgnoringCase("refused").endsWith("(attempts: 3, circuit breaker: CLOSED)");
    assertThat(meters.get("metacontroller.sync.retries").counter().count()).isEqualTo(2.0);
  }

  @Test
  void aSlowHookRunsIntoItsTimeout() {
    server = ScriptedServer.start(silent());
    WebhookSpec spec = WebhookSpec.fromJson(json("{\"url\":\"" + server.url("/sync") + "\",\"timeout\":\"1m30s\"}"));
    Hook hook = client.hook(spec, SYNC);

    StepVerifier.withVirtualTime(() -> hook.call(request(), ROOT))
        .expectSubscription()
        .then(() -> {
          try {
            server.awaitRequest();
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        })
        .expectNoEvent(Duration.ofSeconds(89))
        .thenAwait(Duration.ofSeconds(1))
        .expectErrorSatisfies(error -> {
          assertThat(error).isInstanceOf(HookCallException.class);
          HookCallException failure = (HookCallException) error;
          assertThat(failure.reason()).isEqualTo(Reason.TIMEOUT);
          assertThat(failure.attempts()).isEqualTo(1);
          assertThat(failure.getMessage()).contains(": timed out after 1m30s (attempts: 1");
        })
        .verify(Duration.ofSeconds(30));
    assertThat(server.requests()).hasSize(1);
    assertThat(meters.get("metacontroller.sync.in.flight.requests").gauge().value()).isZero();
  }

  @Test
  void theTimeoutBoundsRetriesAndBackoffToo() {
    // Three attempts need two waits of 300 ms: more than the 500 ms the hook may take.
    useOptions(options(HookClientOptions.Pool.DEFAULTS,
        new HookClientOptions.RetryOptions(3, Duration.ofMillis(300), 1.0, 0.0, Duration.ofMillis(300)),
        HookClientOptions.DEFAULTS.maxResponseBytes(), Duration.ZERO));
    Hook hook = hook(spec -> spec.withTimeout(Duration.ofMillis(500)), status(503, "unavailable"));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.TIMEOUT);
    assertThat(failure.detail()).isEqualTo("timed out after 500ms");
    assertThat(failure.attempts()).isBetween(1, 2);
  }

  @Test
  void aReadTimeoutIsRetried() {
    useOptions(options(HookClientOptions.Pool.DEFAULTS, FAST_RETRIES,
        HookClientOptions.DEFAULTS.maxResponseBytes(), Duration.ofMillis(200)));
    Hook hook = hook(silent(), ok("{\"second\":true}"));

    HookResponse response = succeed(hook.call(request(), ROOT));

    assertThat(response.body()).isEqualTo(json("{\"second\":true}"));
    assertThat(response.attempts()).isEqualTo(2);
  }

  @Test
  void tooManyRequestsWithSecondsAsksToComeBackLater() {
    Hook hook = hook(status(429, "slow down", "Retry-After", "7"), ok("{}"));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure).isInstanceOf(HookRetryAfterException.class);
    assertThat(((HookRetryAfterException) failure).retryAfter()).isEqualTo(Duration.ofSeconds(7));
    assertThat(failure.reason()).isEqualTo(Reason.RETRY_AFTER);
    assertThat(failure.attempts()).isEqualTo(1);
    assertThat(failure.getMessage()).contains("too many requests, retry after 7 seconds");
    assertThat(server.requests()).as("429 is never retried").hasSize(1);
    assertThat(requests("429")).isEqualTo(1.0);
  }

  @Test
  void tooManyRequestsWithADateCountsFromNow() {
    String inTwoMinutes = DateTimeFormatter.RFC_1123_DATE_TIME.format(START.plusSeconds(120).atOffset(ZoneOffset.UTC));
    Hook hook = hook(status(429, "", "Retry-After", inTwoMinutes));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure).isInstanceOfSatisfying(HookRetryAfterException.class,
        retry -> assertThat(retry.retryAfter()).isEqualTo(Duration.ofSeconds(120)));
  }

  @Test
  void anOversizedBodyIsAClearError() {
    useOptions(options(HookClientOptions.Pool.DEFAULTS, FAST_RETRIES, 1024, Duration.ZERO));
    String big = "{\"data\":\"" + "x".repeat(4096) + "\"}";
    Hook hook = hook(ok(big), chunked(big, 100), ok("{\"small\":true}"));

    HookCallException declared = fail(hook.call(request(), ROOT));
    HookCallException streamed = fail(hook.call(request(), ROOT));

    for (HookCallException failure : List.of(declared, streamed)) {
      assertThat(failure.reason()).isEqualTo(Reason.INVALID_RESPONSE);
      assertThat(failure.attempts()).isEqualTo(1);
      assertThat(failure.detail()).isEqualTo("response body exceeds the limit of 1024 bytes");
    }
    assertThat(succeed(hook.call(request(), ROOT)).body()).isEqualTo(json("{\"small\":true}"));
  }

  @Test
  void aChunkedBodyWithinTheLimitIsReassembled() {
    String body = "{\"items\":[" + "1,".repeat(2000) + "1]}";
    Hook hook = hook(chunked(body, 97));

    assertThat(succeed(hook.call(request(), ROOT)).body()).isEqualTo(json(body));
  }

  @Test
  void malformedJsonIsAClearErrorAndNotRetried() {
    Hook hook = hook(ok("{\"children\": [oops"), ok("{}"));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.INVALID_RESPONSE);
    assertThat(failure.detail()).startsWith("malformed JSON in response: ");
    assertThat(failure.attempts()).isEqualTo(1);
    assertThat(server.requests()).hasSize(1);
  }

  @Test
  void anEmptyBodyIsAClearError() {
    Hook hook = hook(ok(""));

    assertThat(fail(hook.call(request(), ROOT)).detail()).isEqualTo("empty response body");
  }

  @Test
  void sendsABearerToken() {
    server = ScriptedServer.start(ok("{}"));
    WebhookSpec spec = WebhookSpec.of(server.url("/sync")).withAuth(HookAuth.authorization(null, "s3cret\n"));

    succeed(client.hook(spec, SYNC).call(request(), ROOT));

    assertThat(server.requests().get(0).headers().get("Authorization")).isEqualTo("Bearer s3cret");
  }

  @Test
  void sendsBasicAuth() {
    server = ScriptedServer.start(ok("{}"));
    WebhookSpec spec = WebhookSpec.of(server.url("/sync")).withAuth(HookAuth.basic("hook", "pa:ss"));

    succeed(client.hook(spec, SYNC).call(request(), ROOT));

    assertThat(server.requests().get(0).headers().get("Authorization")).isEqualTo("Basic aG9vazpwYTpzcw==");
  }

  @Test
  void keepAliveConnectionsAreReused() {
    Hook hook = hook(ok("{}"));

    for (int i = 0; i < 20; i++) {
      succeed(hook.call(request(), ROOT));
    }

    assertThat(server.requests()).hasSize(20);
    // A call completes when its body is read; the connection goes back to the pool a moment later, so the next
    // call may open another one now and then (three were seen on a loaded machine). Without keep-alive it would be
    // 20; most calls must have reused a connection.
    assertThat(server.connectionsOpened()).isLessThanOrEqualTo(5);
  }

  @Test
  void anIdleConnectionIsClosedAfterMaxIdleTime() {
    usePool(pool(Duration.ofMillis(200), Duration.ofMinutes(5)));
    Hook hook = hook(ok("{}"));
    succeed(hook.call(request(), ROOT));

    // No call follows, so only the background eviction can close it: nothing acquires it to find it stale.
    await().atMost(Duration.ofSeconds(10)).until(() -> server.connectionsClosed() == 1);
    succeed(hook.call(request(), ROOT));

    assertThat(server.connectionsOpened()).as("the next call connects anew").isEqualTo(2);
  }

  @Test
  void aConnectionOlderThanMaxLifeTimeIsNotReused() {
    // Never idle long enough to be evicted for that: calls keep coming until the first connection is retired.
    usePool(pool(Duration.ofSeconds(30), Duration.ofMillis(200)));
    Hook hook = hook(ok("{}"));
    succeed(hook.call(request(), ROOT));

    await().atMost(Duration.ofSeconds(10)).until(() -> {
      succeed(hook.call(request(), ROOT));
      return server.connectionsClosed() > 0;
    });
    succeed(hook.call(request(), ROOT));

    assertThat(server.connectionsOpened()).as("calls go on over a new connection")
        .isGreaterThan(server.connectionsClosed());
  }

  @Test
  void callsBeyondThePendingLimitFailFastAsOverloaded() throws InterruptedException {
    usePool(pool(1, 1));
    Sinks.Empty<Void> release = Sinks.empty();
    Hook hook = hook(ScriptedServer.after(release.asMono(), ok("{}")));

    var first = hook.call(request(), ROOT).toFuture();
    server.awaitRequest();
    var second = hook.call(request(), ROOT).toFuture();
    HookCallException third = fail(hook.call(request(), ROOT));
    release.tryEmitEmpty();

    assertThat(third.reason()).isEqualTo(Reason.OVERLOADED);
    assertThat(third.attempts()).isEqualTo(1);
    assertThat(first.join().body()).isEqualTo(json("{}"));
    assertThat(second.join().body()).isEqualTo(json("{}"));
  }

  @Test
  void aThousandConcurrentCallsStayWithinTheConnectionLimit() {
    usePool(pool(8, 1000));
    Sinks.Empty<Void> gate = Sinks.empty();
    // A call's deadline counts its wait for a connection: 1,000 calls over 8 connections on a machine loaded by other
    // builds took more than the default 10 s. What is asserted is the connections, not how fast they were served.
    Hook hook = hook(spec -> spec.withTimeout(Duration.ofMinutes(2)),
        ScriptedServer.after(gate.asMono(), ok("{\"ok\":true}")));

    var all = Flux.range(0, 1000)
        .flatMap(i -> hook.call(request(), new CacheKey("Widget", "default", "w" + i)), 1000)
        .collectList()
        .toFuture();
    // Hold the first answers until every connection the pool may open is busy, then let everything through.
    await().atMost(Duration.ofSeconds(30)).until(() -> server.requests().size() >= 8);
    gate.tryEmitEmpty();
    List<HookResponse> responses = all.join();

    assertThat(responses).hasSize(1000).allSatisfy(r -> assertThat(r.attempts()).isEqualTo(1));
    assertThat(server.requests()).hasSize(1000);
    assertThat(server.maxOpenConnections()).isEqualTo(8);
    assertThat(server.connectionsOpened()).isEqualTo(8);
  }

  @Test
  void theSameHookTwiceSharesItsMeters() {
    server = ScriptedServer.start(ok("{}"));
    Hook first = client.hook(WebhookSpec.of(server.url("/sync")), SYNC);
    Hook second = client.hook(WebhookSpec.of(server.url("/sync")), SYNC);

    succeed(first.call(request(), ROOT));
    succeed(second.call(request(), ROOT));

    assertThat(requests("200")).isEqualTo(2.0);
    assertThat(first.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
    assertThat(Optional.of(second.identity())).hasValue(SYNC);
  }
}
