package dev.metareactor.http;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The W3C Trace Context headers ({@code traceparent}, {@code tracestate}) a {@link Hook#call} sends, so that the
 * hook's own spans nest under the caller's. The caller puts them in the call's Reactor context ({@link #context});
 * a call without them sends neither header. Plain strings: the client does not depend on a tracing library, the
 * caller builds them with its own (the engine with OpenTelemetry's W3C propagator).
 *
 * @param traceparent the {@code traceparent} value ({@code 00-<trace id>-<parent span id>-<flags>})
 * @param tracestate the {@code tracestate} value, or {@code null} when there is none
 */
public record TraceHeaders(String traceparent, @Nullable String tracestate) {

  public static final String TRACEPARENT = "traceparent";
  public static final String TRACESTATE = "tracestate";

  private static final Object KEY = TraceHeaders.class;

  public TraceHeaders {
    Objects.requireNonNull(traceparent, "traceparent");
  }

  /** {@code context} with these headers for the hook calls made under it. */
  public Context into(Context context) {
    return context.put(KEY, this);
  }

  /** The headers the calls under {@code context} carry, or {@code null}: no lookup cost beyond the context's own. */
  static @Nullable TraceHeaders of(ContextView context) {
    return context.getOrDefault(KEY, null);
  }
}
