package dev.metareactor.http;

import io.netty.handler.codec.http.HttpHeaders;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.Objects;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * A {@link HookServer} route in a span of its own that continues the caller's trace: the parent is read from the
 * request's headers with the OpenTelemetry's propagators ({@code traceparent}/{@code tracestate} with the W3C
 * propagator), so a hook's spans nest under the engine's hook call. The span is the current one ({@link
 * Span#current()}) while the route's function runs, and ends when its answer does; the scope is closed before the
 * function returns, so nothing stays current on the event loop.
 *
 * <p>Only the OpenTelemetry API: what the spans become (exported, sampled, dropped) is the OpenTelemetry handed in,
 * which the hook's application configures.
 */
final class HookTracing {

  private static final TextMapGetter<HttpHeaders> HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(HttpHeaders carrier) {
      return carrier.names();
    }

    @Override
    public @Nullable String get(@Nullable HttpHeaders carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  };

  private final Tracer tracer;
  private final TextMapPropagator propagator;

  HookTracing(OpenTelemetry openTelemetry) {
    Objects.requireNonNull(openTelemetry, "openTelemetry");
    this.tracer = openTelemetry.getTracer("dev.metareactor.http.HookServer");
    this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
  }

  /** {@code route} at {@code path}, each call in a server span under the caller's. */
  BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>> traced(String path,
      BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>> route) {
    return (request, headers) -> {
      Context parent = propagator.extract(Context.root(), headers, HEADERS);
      Span span = tracer.spanBuilder("POST " + path).setParent(parent).setSpanKind(SpanKind.SERVER)
          .setAttribute("http.request.method", "POST").setAttribute("url.path", path).startSpan();
      Mono<JsonNode> answer;
      try (Scope scope = parent.with(span).makeCurrent()) {
        answer = route.apply(request, headers);
      } catch (RuntimeException e) {
        failed(span, e);
        span.end();
        throw e;
      }
      // Ended with the answer, before the server writes it.
      return answer.doOnSuccess(body -> span.end())
          .doOnError(e -> {
            failed(span, e);
            span.end();
          })
          .doOnCancel(span::end);
    };
  }

  private static void failed(Span span, Throwable error) {
    span.recordException(error);
    span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
  }
}
