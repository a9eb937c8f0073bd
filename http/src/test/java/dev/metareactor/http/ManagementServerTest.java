package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.FAST;
import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.SYNC;
import static dev.metareactor.http.Fixtures.json;
import static dev.metareactor.http.Fixtures.succeed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ManagementServerTest {

  private static final Optional<InetSocketAddress> ANY_PORT = Optional.of(new InetSocketAddress("127.0.0.1", 0));

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final HttpClient http = HttpClient.newHttpClient();
  private final AtomicBoolean ready = new AtomicBoolean();
  private ManagementServer management;

  @AfterEach
  void tearDown() {
    if (management != null) {
      management.close();
    }
  }

  private HttpResponse<String> get(Optional<InetSocketAddress> address, String path)
      throws IOException, InterruptedException {
    InetSocketAddress bound = address.orElseThrow();
    URI uri = URI.create("http://127.0.0.1:" + bound.getPort() + path);
    return http.send(HttpRequest.newBuilder(uri).GET().build(), BodyHandlers.ofString());
  }

  @Test
  void metricsShowTheHookMetricsUnderUpstreamNames() throws Exception {
    String url;
    try (HookServer hooks = HookServer.builder().etags(true).route("/sync", request -> json("{}")).start();
        HookClient client = HookClient.create(FAST, registry)) {
      url = hooks.url("/sync");
      Hook hook = client.hook(WebhookSpec.of(url).withEtag(new EtagSettings(true, null, null)), SYNC);
      succeed(hook.call(json("{}"), ROOT));
      succeed(hook.call(json("{}"), ROOT));
    }
    management = ManagementServer.start(new ManagementServer.Options(ANY_PORT, ANY_PORT), registry, ready::get);

    HttpResponse<String> metrics = get(management.metricsAddress(), "/metrics");

    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
    String labels = "controller_name=\"test-controller\",controller_type=\"CompositeController\"";
    assertThat(metrics.body())
        .contains("# TYPE metacontroller_sync_requests_total counter")
        .contains("metacontroller_sync_requests_total{code=\"200\"," + labels + ",method=\"post\",url=\"" + url
            + "\"} 1")
        .contains("metacontroller_sync_requests_total{code=\"304\"," + labels + ",method=\"post\",url=\"" + url
            + "\"} 1")
        .contains("# TYPE metacontroller_sync_request_duration_histogram_seconds histogram")
        .contains("metacontroller_sync_request_duration_histogram_seconds_bucket{" + labels
            + ",method=\"post\",url=\"" + url + "\",le=\"0.005\"}")
        .contains("metacontroller_sync_request_duration_histogram_seconds_bucket{" + labels
            + ",method=\"post\",url=\"" + url + "\",le=\"10.0\"}")
        .contains("metacontroller_sync_request_duration_histogram_seconds_count{" + labels
            + ",method=\"post\",url=\"" + url + "\"} 2")
        .contains("metacontroller_sync_in_flight_requests{" + labels + ",url=\"" + url + "\"} 0")
        .contains("metacontroller_sync_retries_total{" + labels + ",url=\"" + url + "\"} 0")
        .contains("metacontroller_sync_etag_cache_lookups_total{" + labels + ",result=\"hit\",url=\"" + url
            + "\"} 1")
        .contains("resilience4j_circuitbreaker_state{name=\"" + url + "\",state=\"closed\"} 1")
        .contains("resilience4j_retry_calls_total{kind=\"successful_without_retry\",name=\"" + url + "\"} 2");
  }

  @Test
  void healthIsAlwaysOkAndReadinessFollowsTheCheck() throws Exception {
    management = ManagementServer.start(new ManagementServer.Options(ANY_PORT, ANY_PORT), registry, ready::get);

    assertThat(get(management.healthAddress(), "/healthz").body()).isEqualTo("ok");
    HttpResponse<String> notReady = get(management.healthAddress(), "/readyz");
    assertThat(notReady.statusCode()).isEqualTo(503);
    assertThat(notReady.body()).isEqualTo("not ready");
    ready.set(true);
    HttpResponse<String> isReady = get(management.healthAddress(), "/readyz");
    assertThat(isReady.statusCode()).isEqualTo(200);
    assertThat(isReady.body()).isEqualTo("ok");
    assertThat(get(management.healthAddress(), "/metrics").statusCode()).as("metrics are elsewhere").isEqualTo(404);
    assertThat(get(management.metricsAddress(), "/healthz").statusCode()).isEqualTo(404);
  }

  @Test
  void aFailingReadinessCheckMeansNotReady() throws Exception {
    management = ManagementServer.start(new ManagementServer.Options(Optional.empty(), ANY_PORT), registry, () -> {
      throw new IllegalStateException("informer gone");
    });

    assertThat(get(management.healthAddress(), "/readyz").statusCode()).isEqualTo(503);
  }

  @Test
  void oneAddressForBothServesEverything() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Optional<InetSocketAddress> address = Optional.of(new InetSocketAddress("127.0.0.1", port));
    ready.set(true);
    management = ManagementServer.start(new ManagementServer.Options(address, address), registry, ready::get);

    assertThat(management.metricsAddress()).isEqualTo(management.healthAddress());
    assertThat(get(address, "/metrics").statusCode()).isEqualTo(200);
    assertThat(get(address, "/readyz").statusCode()).isEqualTo(200);
  }

  @Test
  void anEmptyAddressDisablesThatServer() throws Exception {
    management = ManagementServer.start(new ManagementServer.Options(Optional.empty(), ANY_PORT), registry, ready::get);

    assertThat(management.metricsAddress()).isEmpty();
    assertThat(management.healthAddress()).isPresent();
    assertThat(ManagementServer.Options.DEFAULTS.metricsAddress()).hasValue(new InetSocketAddress(9999));
    assertThat(ManagementServer.Options.DEFAULTS.healthAddress()).hasValue(new InetSocketAddress(8081));
  }

  @Test
  void shutdownStopsServing() throws Exception {
    management = ManagementServer.start(new ManagementServer.Options(ANY_PORT, ANY_PORT), registry, ready::get);
    Optional<InetSocketAddress> health = management.healthAddress();

    management.close();
    management = null;

    assertThatThrownBy(() -> get(health, "/healthz")).isInstanceOf(ConnectException.class);
  }

  /**
   * A /metrics request held in flight (a gauge blocks the scrape until {@code release}) and a shutdown started on
   * another thread while it is; {@code shutdownWaited} tells whether shutdown returned only after the release.
   */
  private record ShutdownWithARequestInFlight(CompletableFuture<HttpResponse<String>> request,
      CompletableFuture<Boolean> shutdownWaited, CountDownLatch release) {}

  private ShutdownWithARequestInFlight shutdownWithARequestInFlight() throws InterruptedException {
    CountDownLatch scraping = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Gauge.builder("held", () -> {
      scraping.countDown();
      try {
        return release.await(30, TimeUnit.SECONDS) ? 1 : 0;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return 0;
      }
    }).register(registry);
    ready.set(true);
    ManagementServer stopping =
        ManagementServer.start(new ManagementServer.Options(ANY_PORT, ANY_PORT), registry, ready::get);
    management = stopping;
    URI metrics = URI.create("http://127.0.0.1:" + stopping.metricsAddress().orElseThrow().getPort() + "/metrics");
    CompletableFuture<HttpResponse<String>> request =
        http.sendAsync(HttpRequest.newBuilder(metrics).GET().build(), BodyHandlers.ofString());
    assertThat(scraping.await(10, TimeUnit.SECONDS)).as("the scrape started").isTrue();
    CompletableFuture<Boolean> shutdownWaited = CompletableFuture.supplyAsync(() -> {
      stopping.shutdown(Duration.ofSeconds(30));
      return release.getCount() == 0;
    });
    return new ShutdownWithARequestInFlight(request, shutdownWaited, release);
  }

  private static boolean refusesConnections(Optional<InetSocketAddress> address) {
    try {
      new Socket("127.0.0.1", address.orElseThrow().getPort()).close();
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  @Test
  void readinessIs503FromTheMomentShutdownBegins() throws Exception {
    ShutdownWithARequestInFlight stopping = shutdownWithARequestInFlight();
    Optional<InetSocketAddress> health = management.healthAddress();

    // The servers stop one after the other, metrics first: while it waits for its request the health server still
    // answers, and must already say not ready.
    await().atMost(Duration.ofSeconds(10)).until(() -> get(health, "/readyz").statusCode() == 503);
    assertThat(stopping.request()).as("still draining").isNotDone();
    stopping.release().countDown();
    assertThat(stopping.shutdownWaited().get(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aRequestInFlightWhenShutdownBeginsCompletes() throws Exception {
    ShutdownWithARequestInFlight stopping = shutdownWithARequestInFlight();
    Optional<InetSocketAddress> metrics = management.metricsAddress();

    await().atMost(Duration.ofSeconds(10)).until(() -> refusesConnections(metrics));
    stopping.release().countDown();

    HttpResponse<String> response = stopping.request().get(10, TimeUnit.SECONDS);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).contains("held 1.0");
    assertThat(stopping.shutdownWaited().get(10, TimeUnit.SECONDS)).as("shutdown waited for it").isTrue();
  }
}
