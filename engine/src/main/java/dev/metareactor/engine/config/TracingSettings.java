package dev.metareactor.engine.config;

/**
 * {@code --tracing} and {@code --tracing-sample-ratio}: whether each sync is traced with OpenTelemetry (the standard
 * {@code OTEL_*} environment configures the exporter, its endpoint and the resource; see {@code tracing/Tracing}),
 * and which share of the syncs is sampled when {@code OTEL_TRACES_SAMPLER} does not say otherwise.
 *
 * @param enabled whether syncs are traced at all; off, the engine makes no span and sends no trace header
 * @param sampleRatio the share of syncs sampled, from 0 to 1
 */
public record TracingSettings(boolean enabled, double sampleRatio) {

  /** No tracing. */
  public static final TracingSettings OFF = new TracingSettings(false, 1.0);

  public TracingSettings {
    if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
      throw new IllegalArgumentException("--tracing-sample-ratio must be between 0 and 1, got " + sampleRatio);
    }
  }
}
