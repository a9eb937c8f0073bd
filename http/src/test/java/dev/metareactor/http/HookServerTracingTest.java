package dev.metareactor.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * {@link HookServer.Builder#tracing}: a call's route runs in a server span that continues the caller's W3C trace
 * ({@code traceparent}), current while the route's function runs, so the hook's own spans nest under the caller's.
 */
class HookServerTracingTest {

  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CALLER_SPAN = "00f067aa0ba902b7";

  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
      .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
      .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
      .build();
  private final HttpClient http = HttpClient.newHttpClient();
  /** The current span's id inside each call of the route. */
  private final List<String> current = new CopyOnWriteArrayList<>();
  private HookServer server;

  @AfterEach
  void close() {
    server.close();
    otel.close();
  }

  @Test
  void aCallContinuesTheCallersTraceInASpanCurrentWhileTheRouteRuns() throws Exception {
    server = HookServer.builder().tracing(otel).route("/sync", this::answer).start();

    HttpResponse<String> response = post("00-" + TRACE_ID + "-" + CALLER_SPAN + "-01");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(spans.getFinishedSpanItems()).hasSize(1);
    SpanData served = spans.getFinishedSpanItems().get(0);
    assertThat(served.getName()).isEqualTo("POST /sync");
    assertThat(served.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(served.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(served.getParentSpanId()).isEqualTo(CALLER_SPAN);
    assertThat(current).containsExactly(served.getSpanId());
    assertThat(Span.current().getSpanContext().isValid()).as("nothing left current on this thread").isFalse();
  }

  @Test
  void withoutTracingNoSpanIsMade() throws Exception {
    server = HookServer.builder().route("/sync", this::answer).start();

    assertThat(post("00-" + TRACE_ID + "-" + CALLER_SPAN + "-01").statusCode()).isEqualTo(200);

    assertThat(spans.getFinishedSpanItems()).isEmpty();
    assertThat(current).containsExactly(Span.getInvalid().getSpanContext().getSpanId());
  }

  private JsonNode answer(JsonNode request) {
    current.add(Span.current().getSpanContext().getSpanId());
    return JsonNodeFactory.instance.objectNode().put("ok", true);
  }

  private HttpResponse<String> post(String traceparent) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create(server.url("/sync")))
        .header("traceparent", traceparent)
        .POST(BodyPublishers.ofString("{}"))
        .build();
    return http.send(request, BodyHandlers.ofString());
  }
}
