package dev.metareactor.engine.it;

import dev.metareactor.testing.k8s.LocalCluster;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The span exporter {@code otel.traces.exporter=}{@value #NAME}: the spans of an engine started in this JVM with
 * {@code --tracing}, kept in memory for the test to read. OpenTelemetry's autoconfiguration finds it by its name
 * (META-INF/services), so the engine's tracing is set up as in production ({@code tracing/Tracing}: its sampler, its
 * span processors, the batch span processor in front of the exporter); only where the spans go is the test's.
 */
public final class InMemoryTraces implements ConfigurableSpanExporterProvider {

  public static final String NAME = "metareactor-in-memory";

  /** The exporter the last autoconfiguration made (one per engine start, under {@link #start}'s lock). */
  private static volatile InMemorySpanExporter made = InMemorySpanExporter.create();

  /** An engine traced into memory and its spans (until the engine closes: its shutdown clears them). */
  public record Traced(EngineUnderTest engine, InMemorySpanExporter spans) {}

  /**
   * Starts an engine with {@code --tracing} and the default flags plus {@code flags}, exporting its spans here:
   * {@code otel.traces.exporter} and a short batch delay (spans exported within 50 ms of their end, not 5 s) are set
   * as system properties while it starts, the properties that were there before put back after.
   */
  public static synchronized Traced start(LocalCluster cluster, String... flags) {
    Map<String, String> properties = Map.of("otel.traces.exporter", NAME, "otel.bsp.schedule.delay", "50");
    Map<String, String> before = new HashMap<>();
    properties.forEach((key, value) -> {
      String old = System.getProperty(key);
      if (old != null) {
        before.put(key, old);
      }
      System.setProperty(key, value);
    });
    try {
      EngineUnderTest engine = EngineUnderTest.start(cluster,
          Stream.concat(Stream.of("--tracing"), Stream.of(flags)).toArray(String[]::new));
      return new Traced(engine, made);
    } finally {
      properties.keySet().forEach(key -> {
        if (before.containsKey(key)) {
          System.setProperty(key, before.get(key));
        } else {
          System.clearProperty(key);
        }
      });
    }
  }

  @Override
  public SpanExporter createExporter(ConfigProperties config) {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    made = exporter;
    return exporter;
  }

  @Override
  public String getName() {
    return NAME;
  }
}
