package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.engine.tracing.Tracing;
import dev.metareactor.engine.tracing.TracingObjectApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code --tracing} in the middle tier: a real CompositeController over in-memory informers and API, a real hook
 * client and a {@link HookServer} hook, spans collected in memory. A sync is one trace — the sync span, under it
 * the hook call, the child's create and the status write (around its patch) — and the hook receives the hook call's
 * {@code traceparent} and continues the trace; with tracing off, no span is made and no {@code traceparent} sent.
 */
class SyncTracingTest {

  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
      .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
      .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
      .build();
  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  /** The traceparent header of each hook call (empty when it had none). */
  private final List<Optional<String>> traceparents = new CopyOnWriteArrayList<>();
  private HookServer hook;
  private HostedController controller;

  @AfterEach
  void close() {
    if (controller != null) {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
    hooks.close();
    if (hook != null) {
      hook.close();
    }
    otel.close();
  }

  @Test
  void aSyncIsOneTraceOfItsHookCallWritesAndStatusWhichTheHookContinues() {
    hook = hookServer(HookServer.builder().tracing(otel));
    sync(Tracing.with(otel), new TracingObjectApi(api));

    await().atMost(Duration.ofSeconds(10)).until(() -> span("sync things").isPresent());
    SpanData sync = span("sync things").orElseThrow();
    assertThat(sync.getParentSpanContext().isValid()).as("the sync span is a root").isFalse();
    assertThat(sync.getAttributes().get(AttributeKey.stringKey("metareactor.controller.kind")))
        .isEqualTo("CompositeController");
    assertThat(sync.getAttributes().get(AttributeKey.stringKey("k8s.namespace.name"))).isEqualTo("team");
    assertThat(sync.getAttributes().get(AttributeKey.stringKey("k8s.object.name"))).isEqualTo("a");
    assertThat(sync.getAttributes().get(AttributeKey.stringKey("metareactor.sync.outcome"))).isEqualTo("success");

    SpanData hookCall = childOf(sync, "hook sync");
    assertThat(hookCall.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(hookCall.getAttributes().get(AttributeKey.stringKey("url.path"))).isEqualTo("/sync");
    SpanData create = childOf(sync, "create ConfigMap");
    assertThat(create.getAttributes().get(AttributeKey.stringKey("k8s.object.name"))).isEqualTo("child");
    assertThat(create.getAttributes().get(AttributeKey.stringKey("metareactor.write.verb"))).isEqualTo("create");
    SpanData status = childOf(sync, "write status");
    assertThat(childOf(status, "status Thing").getAttributes().get(AttributeKey.stringKey("k8s.object.name")))
        .isEqualTo("a");

    // The hook was called under the hook call's span, and its own span continues the trace there.
    assertThat(traceparents).first()
        .isEqualTo(Optional.of("00-" + sync.getTraceId() + "-" + hookCall.getSpanId() + "-"
            + hookCall.getSpanContext().getTraceFlags().asHex()));
    assertThat(hookCall.getSpanContext().isSampled()).isTrue();
    await().atMost(Duration.ofSeconds(5)).until(() -> span("POST /sync").isPresent());
    SpanData served = span("POST /sync").orElseThrow();
    assertThat(served.getTraceId()).isEqualTo(sync.getTraceId());
    assertThat(served.getParentSpanId()).isEqualTo(hookCall.getSpanId());
    assertThat(served.getKind()).isEqualTo(SpanKind.SERVER);
  }

  @Test
  void withTracingOffAHookCallCarriesNoTraceparentAndNoSpanIsMade() {
    hook = hookServer(HookServer.builder());
    sync(Tracing.OFF, api);

    await().atMost(Duration.ofSeconds(10)).until(() -> api.actions().stream()
        .anyMatch(action -> action.verb().equals("patch-status")));
    assertThat(traceparents).isNotEmpty().allMatch(Optional::isEmpty);
    assertThat(spans.getFinishedSpanItems()).isEmpty();
  }

  private HookServer hookServer(HookServer.Builder builder) {
    return builder.routeWithHeaders("/sync", (request, headers) -> {
      traceparents.add(Optional.ofNullable(headers.get("traceparent")));
      ObjectNode answer = KubeJson.nodes().objectNode();
      answer.putObject("status").put("synced", true);
      ObjectNode child = answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      child.putObject("metadata").put("name", "child");
      return Mono.just(answer);
    }).start();
  }

  /** Runs the controller with {@code tracing} and its writes through {@code writes}, and adds parent {@code a}. */
  private void sync(Tracing tracing, ObjectApi writes) {
    ControllerContext context = new ControllerContext(EngineCommand.parse(),
        new FixedDiscovery(HostedThings.THINGS, HostedThings.CONFIG_MAPS),
        informers, writes, new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(),
            "test"), hooks, new SimpleMeterRegistry(), Scheduling.production(), Sharding.disabled(), WriteFence.OPEN,
        tracing);
    controller = HostedThings.started(context, hook.url("/sync"));
    HostedThings.addParent(informers);
  }

  private Optional<SpanData> span(String name) {
    return spans.getFinishedSpanItems().stream().filter(span -> span.getName().equals(name)).findFirst();
  }

  /** The one span {@code name} whose parent is {@code parent}. */
  private SpanData childOf(SpanData parent, String name) {
    List<SpanData> children = spans.getFinishedSpanItems().stream()
        .filter(span -> span.getName().equals(name) && span.getParentSpanId().equals(parent.getSpanId()))
        .toList();
    assertThat(children).as("%s under %s, among %s", name, parent.getName(), spans.getFinishedSpanItems())
        .hasSize(1);
    assertThat(children.get(0).getTraceId()).isEqualTo(parent.getTraceId());
    assertThat(children.get(0).getEndEpochNanos()).as("%s ends within %s", name, parent.getName())
        .isLessThanOrEqualTo(parent.getEndEpochNanos());
    assertThat(SpanId.isValid(children.get(0).getSpanId())).isTrue();
    return children.get(0);
  }
}
