package dev.metareactor.engine.tracing;

import dev.metareactor.engine.config.TracingSettings;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The engine's tracing: off ({@link #OFF}), or the OpenTelemetry SDK that {@code --tracing} starts. The SDK is
 * configured by the standard {@code OTEL_*} environment variables (and {@code otel.*} system properties) through
 * OpenTelemetry's autoconfiguration: {@code OTEL_TRACES_EXPORTER} ({@code otlp}, the default, or {@code none}, or
 * {@code console}), {@code OTEL_EXPORTER_OTLP_ENDPOINT} and the rest of the exporter's settings, {@code
 * OTEL_TRACES_SAMPLER}, {@code OTEL_RESOURCE_ATTRIBUTES}, {@code OTEL_SERVICE_NAME}, the batch span processor's.
 * The engine's defaults, which the environment overrides: OTLP over HTTP ({@code http/protobuf}: the exporter sends
 * with the JDK's HttpClient, which speaks no gRPC), the sampler {@code parentbased_traceidratio} at {@code
 * --tracing-sample-ratio}, the service name {@code metareactor}, no metrics or logs exported (the engine's metrics are
 * Prometheus', its logs its own).
 */
public final class Tracing implements AutoCloseable {

  /** No tracing: no span is made, no header sent. */
  public static final Tracing OFF = new Tracing(null, null);

  private static final String SCOPE = "dev.metareactor.engine";
  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

  /**
   * A span processor that does nothing. The SDK makes no span at all (an invalid context, so no {@code traceparent})
   * when it has no processor, as with {@code OTEL_TRACES_EXPORTER=none}; with this one it does, and hooks are sent
   * the sync's trace whether it is exported or not.
   */
  private static final SpanProcessor KEEP_SPANS = new SpanProcessor() {
    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {}

    @Override
    public boolean isStartRequired() {
      return false;
    }

    @Override
    public void onEnd(ReadableSpan span) {}

    @Override
    public boolean isEndRequired() {
      return false;
    }
  };

  private final @Nullable Tracer tracer;
  private final @Nullable OpenTelemetrySdk owned;

  private Tracing(@Nullable Tracer tracer, @Nullable OpenTelemetrySdk owned) {
    this.tracer = tracer;
    this.owned = owned;
  }

  /**
   * The tracing {@code settings} ask for: {@link #OFF}, or an SDK configured from the environment.
   *
   * @throws IllegalArgumentException when the {@code OTEL_*} configuration is unusable (an unknown exporter, the
   *     {@code grpc} protocol), naming the problem
   */
  public static Tracing start(TracingSettings settings) {
    if (!settings.enabled()) {
      return OFF;
    }
    OpenTelemetrySdk sdk;
    try {
      sdk = AutoConfiguredOpenTelemetrySdk.builder()
          .addPropertiesSupplier(() -> defaults(settings))
          .addResourceCustomizer((resource, config) -> named(resource))
          .addTracerProviderCustomizer((provider, config) -> provider.addSpanProcessor(KEEP_SPANS))
          // The engine shuts it down itself, after its controllers stop (their last spans are exported).
          .disableShutdownHook()
          .build()
          .getOpenTelemetrySdk();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("--tracing: cannot configure OpenTelemetry from the OTEL_* environment: "
          + e.getMessage(), e);
    }
    return new Tracing(sdk.getTracer(SCOPE), sdk);
  }

  /** Tracing to {@code openTelemetry}, which the caller keeps and closes (tests, an embedding application). */
  public static Tracing with(OpenTelemetry openTelemetry) {
    return new Tracing(Objects.requireNonNull(openTelemetry, "openTelemetry").getTracer(SCOPE), null);
  }

  /** The defaults the environment and system properties override. */
  static Map<String, String> defaults(TracingSettings settings) {
    return Map.of(
        "otel.exporter.otlp.protocol", "http/protobuf",
        "otel.traces.sampler", "parentbased_traceidratio",
        "otel.traces.sampler.arg", Double.toString(settings.sampleRatio()),
        "otel.metrics.exporter", "none",
        "otel.logs.exporter", "none");
  }

  /** {@code service.name} {@code metareactor} unless the environment named the service. */
  private static Resource named(Resource resource) {
    String name = resource.getAttribute(SERVICE_NAME);
    return name == null || name.startsWith("unknown_service")
        ? resource.merge(Resource.create(Attributes.of(SERVICE_NAME, "metareactor")))
        : resource;
  }

  /** Whether syncs are traced. */
  public boolean on() {
    return tracer != null;
  }

  /**
   * The tracer syncs start their spans with.
   *
   * @throws IllegalStateException when tracing is off
   */
  public Tracer tracer() {
    if (tracer == null) {
      throw new IllegalStateException("tracing is off");
    }
    return tracer;
  }

  /** Exports what is buffered and stops the SDK it started (for at most ten seconds); nothing when off. */
  @Override
  public void close() {
    if (owned != null) {
      owned.shutdown().join(10, TimeUnit.SECONDS);
    }
  }
}
