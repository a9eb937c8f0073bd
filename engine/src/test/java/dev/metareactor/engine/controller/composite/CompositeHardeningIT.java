package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a CompositeController does with a hook that misbehaves: an answer that is wrong anywhere is rejected whole
 * (nothing is written for that sync, not even status) with a Warning {@code SyncError} naming the problem; a 429 is
 * retried after its {@code Retry-After} without an Event; a hook that times out fails its parent without holding up
 * the others; a hook whose child never stays as written (the API server normalises it) is a hot loop, reported and
 * held back.
 */
class CompositeHardeningIT extends CompositeTestBase {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** A child every malformed answer also carries: if it appears, something of a rejected answer was applied. */
  private static String valid(String parent) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" + parent + "-ok\"}}";
  }

  /** Parent name -> the hook's answer (with {@code VALID} replaced) -> the problem the SyncError must name. */
  private static final Map<String, List<String>> MALFORMED = Map.ofEntries(
      Map.entry("undeclared", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
          + "{\"name\":\"s\"}}]}",
          "children: Secret v1 is not declared in spec.childResources")),
      Map.entry("elsewhere", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
              + "\"metadata\":{\"name\":\"c\",\"namespace\":\"kube-system\"}}]}",
          "is in namespace kube-system but its parent is in")),
      Map.entry("nameless", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{}}]}",
          "children[1].metadata.name is required")),
      Map.entry("kindless", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"c\"}}]}",
          "children[1].kind is required")),
      Map.entry("versionless", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}]}",
          "children[1].apiVersion is required")),
      Map.entry("null-child", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,null]}",
          "children[1] must be an object")),
      Map.entry("children-map", List.of(
          "{\"status\":{\"x\":1},\"children\":{\"c\":VALID}}",
          "children must be a list")),
      Map.entry("status-text", List.of(
          "{\"status\":\"fine\",\"children\":[VALID]}",
          "status must be an object")),
      Map.entry("numeric-label", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID,{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
              + "\"metadata\":{\"name\":\"c\",\"labels\":{\"n\":1}}}]}",
          "children[1].metadata.labels.n must be a string")),
      Map.entry("resync-text", List.of(
          "{\"status\":{\"x\":1},\"children\":[VALID],\"resyncAfterSeconds\":\"soon\"}",
          "resyncAfterSeconds must be a number")),
      Map.entry("array", List.of("[VALID]", "response must be a JSON object")));

  @Test
  void aMalformedAnswerIsRejectedWholeWithASyncErrorNamingTheProblem() {
    parents = ParentCrd.create(cluster, "Bad");
    try (HookServer bad = HookServer.builder().route("/sync", request -> {
      String parent = request.path("parent").path("metadata").path("name").asString();
      return JSON.readTree(MALFORMED.get(parent).get(0).replace("VALID", valid(parent)));
    }).start()) {
      engine.createController(controllerYaml("cc-bad", parents, "InPlace", bad.url("/sync"), ""));
      MALFORMED.keySet().forEach(parent -> createParent(parent, List.of(), "v1"));

      for (var malformed : MALFORMED.entrySet()) {
        String parent = malformed.getKey();
        await(parent).atMost(TIMEOUT).until(() -> hasSyncError(parent, malformed.getValue().get(1)));
        assertThat(client.configMaps().withName(parent + "-ok").get()).as("%s: no child written", parent).isNull();
        assertThat(status(parent)).as("%s: no status written", parent).isEmpty();
      }
    }
  }

  @Test
  void aHookAnswering429IsAskedAgainAfterRetryAfterWithoutAnEvent() throws IOException {
    parents = ParentCrd.create(cluster, "Busy");
    List<Long> calls = new CopyOnWriteArrayList<>();
    HttpServer busy = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    busy.createContext("/sync", exchange -> {
      JsonNode request = JSON.readTree(exchange.getRequestBody().readAllBytes());
      calls.add(System.nanoTime());
      byte[] body;
      if (calls.size() == 1) {
        exchange.getResponseHeaders().add("Retry-After", "2");
        body = "busy".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(429, body.length);
      } else {
        body = JSON.writeValueAsBytes(hook.apply(request));
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
      }
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    busy.start();
    try {
      engine.createController(controllerYaml("cc-busy", parents, "InPlace",
          "http://127.0.0.1:" + busy.getAddress().getPort() + "/sync", ""));
      createParent("busy", List.of("a"), "v1");
      awaitChild("busy-a", "v1");
      assertThat(Duration.ofNanos(calls.get(1) - calls.get(0))).as("asked again only after Retry-After")
          .isGreaterThanOrEqualTo(Duration.ofMillis(1900));
      assertThat(engine.eventsAbout(cluster.namespace(), "busy")).as("a 429 is not an error")
          .noneMatch(event -> event.getReason().equals("SyncError"));
    } finally {
      busy.stop(0);
    }
  }

  @Test
  void aHookThatTimesOutFailsItsParentWithoutHoldingUpTheOthers() {
    parents = ParentCrd.create(cluster, "Slow");
    try (HookServer slow = HookServer.builder().routeAsync("/sync", request -> {
      boolean stuck = request.path("parent").path("metadata").path("name").asString().startsWith("stuck");
      return Mono.fromCallable(() -> hook.apply(request)).delayElement(stuck ? Duration.ofSeconds(30) : Duration.ZERO);
    }).start()) {
      engine.createController(controllerYaml("cc-slow", parents, "InPlace", slow.url("/sync"),
          "        timeout: 500ms\n"));
      for (int i = 0; i < 4; i++) {
        createParent("stuck-" + i, List.of("a"), "v1");
      }
      createParent("quick", List.of("a"), "v1");
      awaitChild("quick-a", "v1");
      await().atMost(TIMEOUT).until(() -> hasSyncError("stuck-0", "timed out"));
      assertThat(client.configMaps().withName("stuck-0-a").get()).isNull();
    }
  }

  @Test
  void aHookFightingTheApiServersNormalisationIsAHotLoopReportedAndHeldBack() throws InterruptedException {
    parents = ParentCrd.create(cluster, "Fighter");
    // A LimitRange with cpu 1000m: the API server keeps 1, so dynamic apply finds it changed and updates it on every
    // sync, and the hook asks to be synced again every 100 ms: the same write that never sticks, ten times a second.
    AtomicInteger calls = new AtomicInteger();
    try (HookServer fighter = HookServer.builder().route("/sync", request -> {
      calls.incrementAndGet();
      return JSON.readTree("""
          {"children": [{"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "fighter-limits"},
                         "spec": {"limits": [{"type": "Container", "max": {"cpu": "1000m"}}]}}],
           "resyncAfterSeconds": 0.1}""");
    }).start()) {
      engine.createController(controllerYaml("cc-fighter", parents, "InPlace", fighter.url("/sync"), "")
          .replace("resource: configmaps", "resource: limitranges"));
      createParent("fighter", List.of(), "v1");

      await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "fighter", "HotLoop",
          "update of LimitRange " + cluster.namespace() + "/fighter-limits field spec.limits[0].max.cpu"));
      int atTheWarning = calls.get();
      // Held back 5 s from the fifth identical write: at most a call in flight when the Warning was read. Without the
      // guard the hook is called ten times a second for as long as the parent is there.
      Thread.sleep(2_000);
      assertThat(calls.get() - atTheWarning).as("hook calls in the 2 s after the HotLoop Warning (%d before it)",
          atTheWarning).isLessThanOrEqualTo(1);
    }
  }
}
