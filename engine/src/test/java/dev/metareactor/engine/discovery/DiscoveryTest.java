package dev.metareactor.engine.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.testing.StandInApi;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** When discovery asks the API server again, against a stand-in that serves the aggregated format. */
class DiscoveryTest {

  private static final String CORE = """
      {"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
        {"metadata":{"name":""},"versions":[{"version":"v1","resources":[
          {"resource":"configmaps","responseKind":{"group":"","version":"v1","kind":"ConfigMap"},
           "scope":"Namespaced"}]}]}]}""";
  private static final String STALE = """
      {"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
        {"metadata":{"name":"flap.example.com"},"versions":[{"version":"v1","freshness":"Stale"}]}]}""";
  private static final String CURRENT = """
      {"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
        {"metadata":{"name":"flap.example.com"},"versions":[{"version":"v1","freshness":"Current","resources":[
          {"resource":"flaps","responseKind":{"group":"flap.example.com","version":"v1","kind":"Flap"},
           "scope":"Namespaced"}]}]}]}""";

  private DisposableServer server;
  private KubeApi api;
  private Discovery discovery;

  @AfterEach
  void stop() {
    if (discovery != null) {
      discovery.close();
    }
    if (api != null) {
      api.close();
    }
    if (server != null) {
      server.disposeNow();
    }
  }

  /**
   * An aggregated API the aggregator cannot reach is listed {@code Stale}, without resources. Its APIService's
   * change when it is back may come before the aggregator has read it again, and no other change follows: discovery
   * asks again every interval while a group version is stale, although it follows CRDs and APIServices.
   */
  @Test
  void aStaleGroupIsAskedForAgainUntilItIsServedThoughChangesAreFollowed() {
    AtomicBoolean back = new AtomicBoolean();
    AtomicInteger asked = new AtomicInteger();
    server = HttpServer.create().host("127.0.0.1").port(0)
        .route(routes -> routes
            .get("/api", (request, response) -> response.sendString(Mono.just(CORE)))
            .get("/apis", (request, response) -> {
              asked.incrementAndGet();
              return response.sendString(Mono.just(back.get() ? CURRENT : STALE));
            }))
        .bindNow();
    api = StandInApi.connect(server.port(), "{}", 2);
    discovery = new Discovery(api, Duration.ofMillis(100), Schedulers.parallel());
    discovery.start(Flux.never(), () -> true);

    await().atMost(Duration.ofSeconds(10)).until(() -> asked.get() >= 2);
    assertThat(discovery.current().byResource("flap.example.com/v1", "flaps")).isEmpty();
    back.set(true);
    ApiResource flaps = discovery.resource("flap.example.com/v1", "flaps").block(Duration.ofSeconds(10));
    assertThat(flaps).isNotNull();
    assertThat(flaps.kind()).isEqualTo("Flap");
  }

  @Test
  void staleGroupVersionsAreNamed() {
    assertThat(Discovery.stale(KubeJson.mapper().readTree(STALE)))
        .containsExactly("flap.example.com/v1");
    assertThat(Discovery.stale(KubeJson.mapper().readTree(CURRENT))).isEmpty();
  }
}
