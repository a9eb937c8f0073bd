package dev.metareactor.benchmarks;

import dev.metareactor.http.CacheKey;
import dev.metareactor.http.Hook;
import dev.metareactor.http.HookCallException;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookIdentity;
import dev.metareactor.http.HookResponse;
import dev.metareactor.http.HookServer;
import dev.metareactor.http.WebhookSpec;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Flux;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Hook calls per second through {@link HookClient} against a {@link HookServer} in the same JVM over loopback — the
 * whole client path: JSON serialization, pooled keep-alive HTTP/1.1, the deadline, retry and circuit breaker
 * operators, metrics into a Prometheus registry, and parsing the answer. The server's cost is included (same two
 * cores), so the numbers are a lower bound for a remote hook.
 *
 * <p>Workload ({@code resource} below): a sync request of 862 bytes of JSON as sent (a parent with labels, spec and
 * status, two observed children) answered with 771 bytes (three desired children — a ConfigMap, a Service and a
 * Deployment — and a status).
 *
 * <ul>
 *   <li>{@code sequential}: one call at a time, blocking for each — latency-bound;</li>
 *   <li>{@code concurrent64}: 64 calls in flight at all times ({@code flatMap} with concurrency 64 over batches of
 *       1,024 calls), as a controller with 64 workers drives one hook; the pool allows 64 connections;</li>
 *   <li>{@code deadHookFailFast}: a hook whose port is closed, after its circuit breaker opened: what a call to a dead
 *       hook costs a worker (the breaker's wait is set to an hour so no trial calls run during the measurement).</li>
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar HookClientBenchmark}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 6, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(value = 1, jvmArgsAppend = Forks.NO_LOGGING)
public class HookClientBenchmark {

  private static final int BATCH = 1024;
  private static final int CONCURRENCY = 64;
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final HookIdentity IDENTITY = new HookIdentity("sync", "benchmark", "CompositeController");
  private static final CacheKey ROOT = new CacheKey("Widget", "default", "w1");

  private HookServer server;
  private HookClient client;
  private Hook hook;
  private Hook deadHook;
  private JsonNode request;

  @Setup
  public void setUp() throws IOException {
    request = JSON.readTree(resource("request"));
    JsonNode answer = JSON.readTree(resource("response"));
    server = HookServer.builder().route("/sync", ignored -> answer).start();
    HookClientOptions options = HookClientOptions.DEFAULTS
        .withPool(new HookClientOptions.Pool(CONCURRENCY, BATCH, Duration.ofSeconds(5), Duration.ofSeconds(4),
            Duration.ofMinutes(5), Duration.ofSeconds(5)))
        .withBreaker(new HookClientOptions.BreakerOptions(50, 20, 10, Duration.ofHours(1), 3));
    client = HookClient.create(options, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    hook = client.hook(WebhookSpec.of(server.url("/sync")), IDENTITY);
    if (!hook.call(request, ROOT).block().body().equals(answer)) {
      throw new IllegalStateException("the hook did not answer what the server sent");
    }

    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    deadHook = client.hook(WebhookSpec.of("http://127.0.0.1:" + closedPort + "/sync"), IDENTITY);
    while (deadHook.breakerState() != CircuitBreaker.State.OPEN) {
      try {
        deadHook.call(request, ROOT).block();
      } catch (HookCallException expected) {
        // the breaker counts it
      }
    }
  }

  @TearDown
  public void tearDown() {
    client.close();
    server.close();
  }

  @Benchmark
  public HookResponse sequential() {
    return hook.call(request, ROOT).block();
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void concurrent64(Blackhole blackhole) {
    Flux.range(0, BATCH)
        .flatMap(i -> hook.call(request, ROOT), CONCURRENCY)
        .doOnNext(blackhole::consume)
        .blockLast();
  }

  @Benchmark
  public Throwable deadHookFailFast() {
    try {
      deadHook.call(request, ROOT).block();
      throw new IllegalStateException("a dead hook answered");
    } catch (HookCallException e) {
      if (e.reason() != HookCallException.Reason.CIRCUIT_OPEN) {
        throw e;
      }
      return e;
    }
  }

  private static String resource(String name) {
    return switch (name) {
      case "request" -> """
          {"controller":{"apiVersion":"metacontroller.k8s.io/v1alpha1","kind":"CompositeController",
           "metadata":{"name":"benchmark"}},
           "parent":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default",
            "uid":"4d3c2b1a-0000-4000-8000-000000000001","resourceVersion":"123456","generation":3,
            "labels":{"app":"widget","tier":"backend"}},
            "spec":{"replicas":3,"image":"registry.example.com/widget:1.2.3","port":8080},
            "status":{"observedGeneration":2,"ready":3}},
           "children":{"ConfigMap.v1":{"w1-config":{"apiVersion":"v1","kind":"ConfigMap",
            "metadata":{"name":"w1-config","namespace":"default"},"data":{"mode":"fast","level":"3"}}},
            "Service.v1":{"w1":{"apiVersion":"v1","kind":"Service","metadata":{"name":"w1","namespace":"default"},
            "spec":{"selector":{"app":"widget"},"ports":[{"port":80,"targetPort":8080}]}}}},
           "related":{},"finalizing":false}
          """;
      case "response" -> """
          {"status":{"ready":3,"observedGeneration":3},
           "children":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w1-config",
             "labels":{"app":"widget"}},
             "data":{"mode":"fast","level":"3","checksum":"8d777f385d3dfec8815d20f7496026dc"}},
            {"apiVersion":"v1","kind":"Service","metadata":{"name":"w1","labels":{"app":"widget"}},
             "spec":{"selector":{"app":"widget"},"ports":[{"name":"http","port":80,"targetPort":8080}]}},
            {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w1","labels":{"app":"widget"}},
             "spec":{"replicas":3,"selector":{"matchLabels":{"app":"widget"}},"template":{"metadata":{"labels":
             {"app":"widget"}},"spec":{"containers":[{"name":"widget","image":"registry.example.com/widget:1.2.3",
             "ports":[{"containerPort":8080}]}]}}}}],
           "resyncAfterSeconds":0}
          """;
      default -> throw new IllegalArgumentException(name);
    };
  }
}
