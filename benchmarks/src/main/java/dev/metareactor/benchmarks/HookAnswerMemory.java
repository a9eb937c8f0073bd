package dev.metareactor.benchmarks;

import dev.metareactor.http.AnswerScope;
import dev.metareactor.http.CacheKey;
import dev.metareactor.http.Hook;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookIdentity;
import dev.metareactor.http.HookResponse;
import dev.metareactor.http.WebhookSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a hook answer takes in the engine's heap: for realistic and hostile shapes of answers, as large as the
 * default limits let them be (8 MiB, and at most 1,048,576 tokens), the heap a parsed answer retains — measured, by
 * keeping several answers and comparing the used heap after full collections — beside the weight the hook client
 * estimates for it and charges to its budget of answers in flight (its gauge {@code metareactor_hook_answers_bytes}
 * while one answer is held).
 *
 * <p>Not a JMH benchmark: JMH measures time and allocation, not what stays. Run with a heap large enough for a few
 * worst-case answers and the serial collector, so that {@code System.gc()} is a full collection:
 *
 * <pre>{@code
 * java -Xmx2g -XX:+UseSerialGC -Dslf4j.provider=org.slf4j.helpers.NOP_FallbackServiceProvider \
 *     -cp benchmarks/target/benchmarks.jar dev.metareactor.benchmarks.HookAnswerMemory
 * }</pre>
 */
public final class HookAnswerMemory {

  private static final int CAP = 8 << 20;
  private static final long MAX_TOKENS = CAP / 8;
  private static final int HELD = 3;
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private record Shape(String name, IntFunction<String> item, String open, String close) {}

  private HookAnswerMemory() {}

  public static void main(String[] args) {
    String deployment = "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web-%1$d\","
        + "\"namespace\":\"default\",\"labels\":{\"app\":\"web-%1$d\",\"team\":\"platform\"},\"annotations\":"
        + "{\"example.com/owner\":\"platform-team\"}},\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":"
        + "{\"app\":\"web-%1$d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web-%1$d\"}},\"spec\":"
        + "{\"containers\":[{\"name\":\"app\",\"image\":\"registry.example.com/app:1.2.3\",\"args\":"
        + "[\"--port=8080\",\"--verbose\"],\"ports\":[{\"containerPort\":8080,\"name\":\"http\",\"protocol\":\"TCP\"}],"
        + "\"env\":[{\"name\":\"MODE\",\"value\":\"production\"},{\"name\":\"LEVEL\",\"value\":\"info\"}],"
        + "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"limits\":{\"memory\":\"256Mi\"}},"
        + "\"readinessProbe\":{\"httpGet\":{\"path\":\"/ready\",\"port\":8080},\"periodSeconds\":5}}]}}}}";
    String configMap = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"parent-%1$d\","
        + "\"labels\":{\"app\":\"web\"}},\"data\":{\"value\":\"" + "v".repeat(300) + "\",\"n\":\"%1$d\"}}";
    List<Shape> shapes = List.of(
        new Shape("ConfigMaps, 300 B of data each", i -> configMap.formatted(i), "{\"children\":[", "]}"),
        new Shape("Deployments", i -> deployment.formatted(i), "{\"children\":[", "]}"),
        new Shape("hostile: [{},{},...]", i -> "{}", "[", "]"),
        new Shape("hostile: [{\"\":{}},...]", i -> "{\"\":{}}", "[", "]"),
        new Shape("hostile: [[],[],...]", i -> "[]", "[", "]"),
        new Shape("hostile: [\"a\",\"a\",...]", i -> "\"a\"", "[", "]"),
        new Shape("hostile: [0.5,0.5,...]", i -> "0.5", "[", "]"),
        new Shape("hostile: {\"k0\":0,\"k1\":0,...}", i -> "\"k" + i + "\":0", "{", "}"),
        new Shape("hostile: [0,0,...]", i -> "0", "[", "]"));

    HookClientOptions options = HookClientOptions.DEFAULTS.withMaxResponseBytes(CAP);
    System.out.printf(Locale.ROOT, "cap %d bytes, at most %d tokens, budget %d bytes; %d answers held per shape%n%n",
        CAP, MAX_TOKENS, options.answerMemoryBytes(), HELD);
    System.out.println("| answer | bytes | tokens | estimated (MB) | retained, measured (MB) | estimated / measured "
        + "| retained / bytes |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    for (Shape shape : shapes) {
      byte[] answer = build(shape);
      measure(shape.name(), answer, options);
    }
  }

  /** As many items as fit in the cap and the token limit. */
  private static byte[] build(Shape shape) {
    StringBuilder text = new StringBuilder(shape.open());
    long tokens = 2;
    // Every item of a shape has as many tokens as the first.
    long itemTokens = tokens(shape.open() + shape.item().apply(0) + shape.close()) - 2;
    for (int i = 0; ; i++) {
      String item = (i == 0 ? "" : ",") + shape.item().apply(i);
      if (text.length() + item.length() + shape.close().length() > CAP || tokens + itemTokens > MAX_TOKENS) {
        break;
      }
      text.append(item);
      tokens += itemTokens;
    }
    return text.append(shape.close()).toString().getBytes(StandardCharsets.UTF_8);
  }

  private static long tokens(String json) {
    long count = 0;
    try (JsonParser parser = JSON.createParser(json)) {
      while (parser.nextToken() != null) {
        count++;
      }
    }
    return count;
  }

  private static void measure(String name, byte[] answer, HookClientOptions options) {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .post("/sync", (request, response) -> request.receive().then(
                response.header("Content-Type", "application/json").sendByteArray(Mono.just(answer)).then()))
            .post("/tiny", (request, response) -> request.receive().then(
                response.header("Content-Type", "application/json").sendString(Mono.just("{}")).then())))
        .bindNow();
    try (HookClient client = HookClient.create(options, meters)) {
      HookIdentity identity = new HookIdentity("sync", "measure", "CompositeController");
      Hook hook = client.hook(WebhookSpec.of("http://127.0.0.1:" + server.port() + "/sync")
          .withTimeout(Duration.ofMinutes(1)), identity);
      Hook tiny = client.hook(WebhookSpec.of("http://127.0.0.1:" + server.port() + "/tiny"), identity);
      CacheKey root = new CacheKey("Widget", "default", "w");
      // The estimate: what the budget's gauge shows while one answer is held by its work.
      double estimated = AnswerScope.around(hook.call(JSON.createObjectNode(), root)
          .map(held -> meters.get("metareactor.hook.answers").gauge().value())).block();
      // The heap: several answers kept past their calls (so the budget, which holds two such answers, lets them).
      // A tiny call first, so that nothing on the way still refers to the last large answer.
      tiny.call(JSON.createObjectNode(), root).block();
      long before = usedHeap();
      List<HookResponse> held = Flux.range(0, HELD).concatMap(i -> hook.call(JSON.createObjectNode(), root))
          .collectList().block();
      long after = usedHeap();
      keep(held);
      double retained = (after - before) / (double) HELD;
      System.out.printf(Locale.ROOT, "| %s | %,d | %,d | %.1f | %.1f | %.2f | %.1f |%n", name, answer.length,
          tokens(new String(answer, StandardCharsets.UTF_8)), estimated / 1e6, retained / 1e6,
          estimated / retained, retained / answer.length);
    } finally {
      server.disposeNow();
    }
  }

  /** Keeps the answers reachable until here, so the collection before it cannot take them. */
  private static void keep(List<HookResponse> held) {
    if (new ArrayList<>(held).size() != HELD) {
      throw new IllegalStateException("expected " + HELD + " answers");
    }
  }

  private static long usedHeap() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
