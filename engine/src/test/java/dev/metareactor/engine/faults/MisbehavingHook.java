package dev.metareactor.engine.faults;

import dev.metareactor.engine.kube.KubeJson;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A sync hook that answers well (the parent's {@code spec.value} as {@code status.value}, and one ConfigMap child
 * {@code <parent>-child}) or in one of the ways hooks fail in production, switched while it serves. Raw HTTP, so it
 * can do what a well-behaved server framework would not: hang, trickle bytes, send 10 MB.
 */
final class MisbehavingHook implements AutoCloseable {

  /** How the hook answers. */
  enum Mode {
    /** 200 with the parent's value as its status and its one child. */
    HEALTHY,
    /** 500 with an error page. */
    ERROR_500,
    /** Reads the request and never answers. */
    HANG,
    /** 200 with a body that is not JSON. */
    GARBAGE,
    /** 200 with a JSON body of 10 MB (a status with a 10 MB string). */
    OVERSIZED,
    /** 200 and then one byte every 200 ms: a JSON answer that never ends within any timeout. */
    SLOW_LORIS,
    /** 429 with {@code Retry-After: 1}. */
    TOO_MANY_REQUESTS,
    /** 200 with the parent's value as its status and no {@code children} field at all. */
    NO_CHILDREN_FIELD,
    /** 429 without {@code Retry-After}: overloaded, and not saying for how long. */
    TOO_MANY_REQUESTS_BARE,
    /** 200 with 2 MB of JSON nested a million levels deep, under the size cap. */
    DEEP_NESTING,
    /** 200 with 8 MB of JSON (under the cap) holding 2.8 million empty objects: about 225 MB once parsed. */
    MILLIONS_OF_OBJECTS
  }

  private static final int OVERSIZED_BYTES = 10_000_000;
  /** Built once: answers built to blow up when parsed, below the engine's default cap of 8 MiB. */
  private static final byte[] DEEP = ("{\"status\": {\"value\": " + "[".repeat(1_000_000) + "]".repeat(1_000_000)
      + "}}").getBytes(StandardCharsets.UTF_8);
  private static final byte[] OBJECTS = ("{\"status\": {\"value\": \"x\", \"items\": ["
      + "{},".repeat(2_790_000) + "{}]}, \"children\": []}").getBytes(StandardCharsets.UTF_8);

  private final DisposableServer server;
  private volatile Mode mode = Mode.HEALTHY;
  private final AtomicInteger calls = new AtomicInteger();

  MisbehavingHook() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.post("/sync", this::answer))
        .bindNow();
  }

  String url() {
    return "http://127.0.0.1:" + server.port() + "/sync";
  }

  void mode(Mode mode) {
    this.mode = mode;
  }

  /** Calls so far, in any mode. */
  int calls() {
    return calls.get();
  }

  private Publisher<Void> answer(HttpServerRequest request, HttpServerResponse response) {
    calls.incrementAndGet();
    Mode now = mode;
    return request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap(body -> switch (now) {
      case HEALTHY -> json(response, 200, healthy(KubeJson.mapper().readTree(body)).toString());
      case ERROR_500 -> response.status(500).sendString(Mono.just("<html>internal error</html>")).then();
      case HANG -> Mono.never();
      case GARBAGE -> response.status(200).header("Content-Type", "application/json")
          .sendString(Mono.just("this is not {JSON")).then();
      case OVERSIZED -> json(response, 200, "{\"status\": {\"value\": \"" + "x".repeat(OVERSIZED_BYTES) + "\"}}");
      case SLOW_LORIS -> response.status(200).header("Content-Type", "application/json")
          .sendString(Flux.interval(Duration.ofMillis(200))
              .map(tick -> tick == 0 ? "{\"status\": {\"value\": \"" : "x"))
          .then();
      case TOO_MANY_REQUESTS -> response.status(429).header("Retry-After", "1")
          .sendString(Mono.just("slow down")).then();
      case NO_CHILDREN_FIELD -> {
        ObjectNode answer = healthy(KubeJson.mapper().readTree(body));
        answer.remove("children");
        yield json(response, 200, answer.toString());
      }
      case TOO_MANY_REQUESTS_BARE -> response.status(429).sendString(Mono.just("slow down")).then();
      case DEEP_NESTING -> json(response, 200, DEEP);
      case MILLIONS_OF_OBJECTS -> json(response, 200, OBJECTS);
    });
  }

  private static ObjectNode healthy(JsonNode request) {
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("status").put("value", request.path("parent").path("spec").path("value").asString(""));
    String parent = request.path("parent").path("metadata").path("name").asString();
    ObjectNode child = answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
    child.putObject("metadata").put("name", childOf(parent));
    child.putObject("data").put("parent", parent);
    return answer;
  }

  /** The name of the one child the healthy hook answers for {@code parent}. */
  static String childOf(String parent) {
    return parent + "-child";
  }

  private static Mono<Void> json(HttpServerResponse response, int status, String body) {
    return json(response, status, body.getBytes(StandardCharsets.UTF_8));
  }

  private static Mono<Void> json(HttpServerResponse response, int status, byte[] bytes) {
    return response.status(status).header("Content-Type", "application/json")
        .header("Content-Length", Integer.toString(bytes.length))
        .sendByteArray(Mono.just(bytes)).then();
  }

  @Override
  public void close() {
    server.disposeNow();
  }
}
