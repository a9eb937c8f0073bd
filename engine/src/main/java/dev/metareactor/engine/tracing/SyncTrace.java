package dev.metareactor.engine.tracing;

import dev.metareactor.http.TraceHeaders;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * A traced sync's current span and the tracer for its children, carried in the Reactor context of the sync's
 * pipeline ({@link #traced}): whatever runs inside the sync finds the span its own spans go under with {@link #of},
 * on whichever thread it runs. Outside a traced sync (tracing off, a sync not traced, work of no sync) there is none,
 * and {@link #child} runs the work as it is.
 *
 * @param tracer makes the children
 * @param parent the OpenTelemetry context whose span is the children's parent
 */
public record SyncTrace(Tracer tracer, Context parent) {

  private static final Object KEY = SyncTrace.class;

  /** Writes W3C headers into {@link Headers}. */
  private static final TextMapSetter<Headers> HEADERS = (carrier, key, value) -> {
    if (carrier != null) {
      carrier.set(key, value);
    }
  };

  public SyncTrace {
    Objects.requireNonNull(tracer, "tracer");
    Objects.requireNonNull(parent, "parent");
  }

  /** The traced sync the pipeline of {@code context} runs in, or {@code null}. */
  public static @Nullable SyncTrace of(ContextView context) {
    return context.getOrDefault(KEY, null);
  }

  /** A builder of a child of the current span. */
  public SpanBuilder child(String name, SpanKind kind) {
    return tracer.spanBuilder(name).setParent(parent).setSpanKind(kind);
  }

  /**
   * Runs {@code work} in {@code span}, which this trace's tracer started: {@code span} is the parent of the spans
   * {@code work} makes, records its failure, and ends when it does (completes, fails or is cancelled).
   */
  public <T> Mono<T> traced(Span span, Mono<T> work) {
    SyncTrace inside = new SyncTrace(tracer, parent.with(span));
    // Ended as the signal arrives, before it goes on: what runs downstream of it (the rest of the sync, after a
    // hook call's answer) is not this span's time.
    return work
        .doOnSuccess(value -> span.end())
        .doOnError(error -> {
          failed(span, error);
          span.end();
        })
        .doOnCancel(() -> {
          span.setAttribute("metareactor.cancelled", true);
          span.end();
        })
        .contextWrite(context -> context.put(KEY, inside));
  }

  /**
   * Runs {@code work} in a child span of the traced sync it runs in, with {@code attributes}; outside one, {@code
   * work} as it is. For work that is rare next to its own cost (a status write): the lookup is one per subscription.
   */
  public static <T> Mono<T> child(String name, SpanKind kind, Attributes attributes, Mono<T> work) {
    return Mono.deferContextual(context -> {
      SyncTrace trace = of(context);
      return trace == null ? work
          : trace.traced(trace.child(name, kind).setAllAttributes(attributes).startSpan(), work);
    });
  }

  /**
   * Runs {@code call} in a child span that a hook call is made under: the call's Reactor context carries the
   * span's W3C {@link TraceHeaders}, which the hook client sends ({@code traceparent}, {@code tracestate}).
   */
  public <T> Mono<T> hookCall(SpanBuilder span, Function<Span, Mono<T>> call) {
    Span started = span.startSpan();
    Headers headers = new Headers();
    W3CTraceContextPropagator.getInstance().inject(parent.with(started), headers, HEADERS);
    Mono<T> work = call.apply(started);
    String traceparent = headers.traceparent;
    return traced(started, traceparent == null ? work
        : work.contextWrite(context -> new TraceHeaders(traceparent, headers.tracestate).into(context)));
  }

  /** Marks {@code span} failed by {@code error}. */
  public static void failed(Span span, Throwable error) {
    span.recordException(error);
    span.setStatus(StatusCode.ERROR, error.getMessage() == null ? error.getClass().getName() : error.getMessage());
  }

  /** The headers the W3C propagator writes (none when the span context is not valid). */
  private static final class Headers {
    private @Nullable String traceparent;
    private @Nullable String tracestate;

    void set(String key, String value) {
      if (TraceHeaders.TRACEPARENT.equals(key)) {
        traceparent = value;
      } else if (TraceHeaders.TRACESTATE.equals(key)) {
        tracestate = value;
      }
    }
  }
}
