package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.node.ObjectNode;

class ApiWriterTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource EVENTS = new ApiResource("", "v1", "events", "Event", true, Set.of());

  /**
   * A stand-in API server answering every PATCH from {@code answers} in turn (code, and Retry-After when not
   * null), then 200; the PATCHes it received are counted.
   */
  private static final class Answering implements AutoCloseable {
    final AtomicInteger patches = new AtomicInteger();
    final DisposableServer server;
    final KubeApi api;

    Answering(List<int[]> answers) throws Exception {
      server = HttpServer.create().host("127.0.0.1").port(0)
          .route(routes -> routes.route(request -> request.method().name().equals("PATCH"), (request, response) -> {
            int n = patches.getAndIncrement();
            if (n < answers.size()) {
              int[] answer = answers.get(n);
              if (answer[1] >= 0) {
                response.header("Retry-After", Integer.toString(answer[1]));
              }
              return response.status(answer[0]).sendString(Mono.just("{\"kind\":\"Status\",\"message\":\"busy\"}"));
            }
            return response.status(200).sendString(Mono.just("{\"kind\":\"ConfigMap\"}"));
          }))
          .bindNow();
      api = apiOf(server);
    }

    Mono<ObjectApi.Written> patch(MeterRegistry meters) {
      return new ApiWriter(api, new RateLimit(1000, 1000), meters).patch(CONFIG_MAPS, "ns", "a",
          ObjectApi.PatchType.MERGE, KubeJson.nodes().objectNode());
    }

    @Override
    public void close() {
      api.close();
      server.disposeNow();
    }
  }

  /** A connection to {@code server}, through a kubeconfig as the engine gets one. */
  private static KubeApi apiOf(DisposableServer server) throws Exception {
    Path kubeconfig = Files.createTempFile("api-writer", ".kubeconfig");
    kubeconfig.toFile().deleteOnExit();
    Files.writeString(kubeconfig, "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
        + "clusters:\n- name: fake\n  cluster: {server: 'http://127.0.0.1:" + server.port() + "'}\n"
        + "users:\n- name: fake\n  user: {}\ncontexts:\n- name: fake\n  context: {cluster: fake, user: fake}\n");
    return new KubeApi(KubeConfig.load(kubeconfig.toString()), 2);
  }

  /**
   * A thousand Events at once (a storm: every parent failing) through a writer limited to one request a second:
   * a child's create still goes out at once, because Events take their tokens from a bucket of their own. With one
   * bucket it would wait behind all of them, some seventeen minutes.
   */
  @Test
  void aStormOfEventsDoesNotDelayTheWritesOfChildren() throws Exception {
    List<String> posted = new CopyOnWriteArrayList<>();
    DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes.route(request -> request.method().name().equals("POST"), (request, response) -> {
          posted.add(request.uri());
          return response.status(201).sendString(Mono.just("{\"kind\":\"Status\"}"));
        }))
        .bindNow();
    KubeApi api = apiOf(server);
    Disposable.Composite storm = Disposables.composite();
    try {
      ApiWriter writer = new ApiWriter(api, new RateLimit(1, 1), new SimpleMeterRegistry());
      for (int i = 0; i < 1000; i++) {
        storm.add(writer.create(EVENTS, object("Event", "e" + i)).subscribe(written -> { }, error -> { }));
      }
      writer.create(CONFIG_MAPS, object("ConfigMap", "child")).block(Duration.ofSeconds(30));

      assertThat(posted).contains("/api/v1/namespaces/ns/configmaps");
      assertThat(posted.stream().filter(uri -> uri.endsWith("/events")).count())
          .as("Events sent before the child's create").isLessThan(1000);
    } finally {
      storm.dispose();
      api.close();
      server.disposeNow();
    }
  }

  @Test
  void eventsOfBothGroupsAndNothingElseTakeTheEventBucket() {
    assertThat(ApiWriter.isEvent(EVENTS)).isTrue();
    assertThat(ApiWriter.isEvent(new ApiResource("events.k8s.io", "v1", "events", "Event", true, Set.of())))
        .isTrue();
    assertThat(ApiWriter.isEvent(CONFIG_MAPS)).isFalse();
    assertThat(ApiWriter.isEvent(new ApiResource("example.com", "v1", "events", "Event", true, Set.of())))
        .as("a custom resource that happens to be called events").isFalse();
  }

  private static ObjectNode object(String kind, String name) {
    ObjectNode object = KubeJson.nodes().objectNode().put("apiVersion", "v1").put("kind", kind);
    object.putObject("metadata").put("name", name).put("namespace", "ns");
    return object;
  }

  @Test
  void anAnswerWithRetryAfterIsTriedAgainAfterItEachAttemptCounted() throws Exception {
    try (Answering server = new Answering(List.of(new int[] {503, 0}, new int[] {429, 1}))) {
      SimpleMeterRegistry meters = new SimpleMeterRegistry();
      long start = System.nanoTime();
      server.patch(meters).block(Duration.ofSeconds(10));

      assertThat(server.patches).hasValue(3);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("Retry-After: 1 honoured")
          .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
      assertThat(meters.get(MetricCatalogue.API_REQUESTS.name()).tag("code", "503").counter().count()).isEqualTo(1);
      assertThat(meters.get(MetricCatalogue.API_REQUESTS.name()).tag("code", "429").counter().count()).isEqualTo(1);
      assertThat(meters.get(MetricCatalogue.API_REQUESTS.name()).tag("code", "2xx").counter().count()).isEqualTo(1);
    }
  }

  @Test
  void anErrorWithoutRetryAfterOrA4xxFailsAtOnceAndRetriesStopAfterTen() throws Exception {
    try (Answering server = new Answering(List.of(new int[] {500, -1}))) {
      assertThatThrownBy(() -> server.patch(new SimpleMeterRegistry()).block(Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.code()).isEqualTo(500));
      assertThat(server.patches).hasValue(1);
    }
    try (Answering server = new Answering(List.of(new int[] {409, 0}))) {
      assertThatThrownBy(() -> server.patch(new SimpleMeterRegistry()).block(Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.code()).isEqualTo(409));
      assertThat(server.patches).hasValue(1);
    }
    List<int[]> busy = java.util.stream.IntStream.range(0, 20).mapToObj(i -> new int[] {503, 0}).toList();
    try (Answering server = new Answering(busy)) {
      assertThatThrownBy(() -> server.patch(new SimpleMeterRegistry()).block(Duration.ofSeconds(10)))
          .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.code()).isEqualTo(503));
      assertThat(server.patches).hasValue(ApiWriter.MAX_RETRIES + 1);
    }
  }

  @Test
  void everyPathSegmentIsPercentEncodedAndNoNameCanAddressAnotherPath() {
    ApiResource roles = new ApiResource("rbac.authorization.k8s.io", "v1", "roles", "Role", true, Set.of());
    assertThat(ApiWriter.path(CONFIG_MAPS, "ns", "a.b-c")).isEqualTo("/api/v1/namespaces/ns/configmaps/a.b-c");
    assertThat(ApiWriter.path(roles, "ns", "system:x"))
        .isEqualTo("/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles/system:x");
    assertThat(ApiWriter.path(CONFIG_MAPS, "ns", "a b?c#d+é&x=y"))
        .isEqualTo("/api/v1/namespaces/ns/configmaps/a%20b%3Fc%23d%2B%C3%A9%26x%3Dy");
    assertThat(ApiWriter.path(CONFIG_MAPS, "ns", "..x")).isEqualTo("/api/v1/namespaces/ns/configmaps/..x");
    // The API server decodes %2F before it routes: a/status would address a's status, ../x another collection.
    for (String name : List.of("", ".", "..", "../x", "a/status", "a%2Fstatus")) {
      assertThatThrownBy(() -> ApiWriter.path(CONFIG_MAPS, "ns", name)).as("name %s", name)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the name");
    }
    assertThatThrownBy(() -> ApiWriter.path(CONFIG_MAPS, "n/s", "a")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the namespace");
  }

  @Test
  void bodyWritesNumbersAsGoDoes() {
    ObjectNode deployment = (ObjectNode) KubeJson.mapper().readTree("""
        {"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},
         "spec":{"replicas":3.0,"minReadySeconds":1E+1,"progressDeadlineSeconds":-0.0,
                 "template":{"metadata":{"annotations":{"big":"1e20"}}},"x":1e20,"y":123456789012345678901234}}""");

    assertThat(new String(ApiWriter.body(deployment), StandardCharsets.UTF_8)).isEqualTo(
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\"},"
            + "\"spec\":{\"minReadySeconds\":10,\"progressDeadlineSeconds\":-0,\"replicas\":3,"
            + "\"template\":{\"metadata\":{\"annotations\":{\"big\":\"1e20\"}}},"
            + "\"x\":100000000000000000000,\"y\":1.2345678901234569e+23}}");
  }
}
