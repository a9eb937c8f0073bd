package dev.metareactor.examples.hello;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.Map;
import java.util.Optional;

/**
 * The hook's tracing, from the standard {@code OTEL_*} environment: on when {@code OTEL_TRACES_EXPORTER} or {@code
 * OTEL_EXPORTER_OTLP_ENDPOINT} is set (anything else a user sets configures it further), off otherwise, so that the
 * hook run without a collector does not try to export to one. Defaults the environment overrides: OTLP over HTTP
 * (the JDK's HttpClient sends it; it speaks no gRPC), service name {@code hello-hook}, traces only.
 */
final class HelloTracing {

  private HelloTracing() {}

  static Optional<OpenTelemetry> fromEnvironment() {
    Map<String, String> environment = System.getenv();
    if (!environment.containsKey("OTEL_TRACES_EXPORTER") && !environment.containsKey("OTEL_EXPORTER_OTLP_ENDPOINT")) {
      return Optional.empty();
    }
    return Optional.of(AutoConfiguredOpenTelemetrySdk.builder()
        .addPropertiesSupplier(() -> Map.of(
            "otel.service.name", "hello-hook",
            "otel.exporter.otlp.protocol", "http/protobuf",
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none"))
        .build()
        .getOpenTelemetrySdk());
  }
}
