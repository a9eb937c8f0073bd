package dev.metareactor.engine.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.TracingSettings;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Tracing#start}: off unless asked; on, the SDK configured from the {@code otel.*} properties (the same
 * settings as the {@code OTEL_*} environment) over the engine's defaults; an unusable configuration is an error that
 * names {@code --tracing}.
 */
class TracingTest {

  private static final String EXPORTER = "otel.traces.exporter";
  private static final String PROTOCOL = "otel.exporter.otlp.protocol";

  @AfterEach
  void clearProperties() {
    System.clearProperty(EXPORTER);
    System.clearProperty(PROTOCOL);
  }

  @Test
  void offUnlessAsked() {
    assertThat(Tracing.start(TracingSettings.OFF)).isSameAs(Tracing.OFF);
    assertThat(Tracing.OFF.on()).isFalse();
    assertThatThrownBy(Tracing.OFF::tracer).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void onWithTheExporterNoneItStillTracesSampledAtTheRatio() {
    System.setProperty(EXPORTER, "none");
    try (Tracing tracing = Tracing.start(new TracingSettings(true, 1.0))) {
      assertThat(tracing.on()).isTrue();
      assertThat(tracing.tracer().spanBuilder("sync").startSpan().getSpanContext().isSampled()).isTrue();
    }
    try (Tracing tracing = Tracing.start(new TracingSettings(true, 0.0))) {
      assertThat(tracing.tracer().spanBuilder("sync").startSpan().getSpanContext().isSampled()).isFalse();
    }
  }

  @Test
  void theFlags() {
    assertThat(EngineCommand.parse().tracing()).isEqualTo(new TracingSettings(false, 1.0));
    assertThat(EngineCommand.parse("--tracing", "--tracing-sample-ratio=0.1").tracing())
        .isEqualTo(new TracingSettings(true, 0.1));
    assertThatThrownBy(() -> EngineCommand.parse("--tracing-sample-ratio=1.5"))
        .hasMessage("--tracing-sample-ratio must be between 0 and 1, got 1.5");
  }

  @Test
  void theEnginesDefaultsExportOverHttpAndOnlyTraces() {
    assertThat(Tracing.defaults(new TracingSettings(true, 0.25))).containsAllEntriesOf(Map.of(
        PROTOCOL, "http/protobuf",
        "otel.traces.sampler", "parentbased_traceidratio",
        "otel.traces.sampler.arg", "0.25",
        "otel.metrics.exporter", "none",
        "otel.logs.exporter", "none"));
  }

  @Test
  void anUnusableConfigurationNamesTheFlag() {
    // The exporter sends over the JDK's HttpClient, which speaks no gRPC.
    System.setProperty(PROTOCOL, "grpc");
    assertThatThrownBy(() -> Tracing.start(new TracingSettings(true, 1.0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--tracing: cannot configure OpenTelemetry from the OTEL_* environment: ");
  }
}
