package dev.metareactor.http.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusNamingConvention;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * One metric the engine exports, as {@link MetricCatalogue} declares it. The code that registers it starts from
 * {@link #counter}, {@link #functionCounter}, {@link #gauge}, {@link #gauge(Supplier)} or {@link #timer}, which carry
 * the name, the help and the base unit, and adds the labels' values: so a name is written once, and a meter of the
 * wrong type cannot be built from it.
 *
 * @param name Micrometer's name (dotted); the Prometheus registry exports it as {@link #prometheusName()}. A hook's
 *     metrics hold the segment {@value #HOOK} where the hook type goes: {@link #forHook} fills it in
 * @param type what Prometheus exposes
 * @param baseUnit Micrometer's base unit, which the Prometheus name carries as a suffix ({@code bytes},
 *     {@code seconds}); none for a timer, whose unit is always seconds
 * @param labels the label names, exactly as exported: dashboards and alerts select on them
 * @param help what it counts or measures: the {@code # HELP} line of a metric Metareactor registers
 * @param binder the library's meter binder that registers it (the JVM's metrics, Resilience4j's), whose own help
 *     text goes to {@code # HELP}; none for a metric Metareactor registers from this declaration
 */
public record Metric(String name, Type type, @Nullable String baseUnit, List<String> labels, String help,
    @Nullable String binder) {

  /** The name segment of a hook's metrics that stands for the hook type ({@code sync}, {@code finalize}, ...). */
  public static final String HOOK = "<hook>";

  private static final PrometheusNamingConvention PROMETHEUS = new PrometheusNamingConvention();

  /** What Prometheus exposes, with the Micrometer meter behind it. */
  public enum Type {
    COUNTER("counter", Meter.Type.COUNTER),
    GAUGE("gauge", Meter.Type.GAUGE),
    /** A timer with buckets; it also exports {@code <name>_max}, a gauge of the largest recent value. */
    HISTOGRAM("histogram", Meter.Type.TIMER),
    /** A timer without buckets ({@code _count} and {@code _sum}); it also exports {@code <name>_max}. */
    SUMMARY("summary", Meter.Type.TIMER);

    private final String prometheus;
    private final Meter.Type meter;

    Type(String prometheus, Meter.Type meter) {
      this.prometheus = prometheus;
      this.meter = meter;
    }

    /** The type as Prometheus' {@code # TYPE} line says it. */
    public String prometheus() {
      return prometheus;
    }
  }

  public Metric {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    labels = List.copyOf(labels);
    Objects.requireNonNull(help, "help");
    if (type.meter == Meter.Type.TIMER && baseUnit != null) {
      throw new IllegalArgumentException(name + ": a timer's unit is seconds, it takes no base unit");
    }
  }

  /**
   * The name in Prometheus' exposition, as the engine's registry makes it: dots become underscores, the base unit
   * (seconds for a timer) is appended, and {@code _total} to a counter.
   */
  public String prometheusName() {
    // The placeholder is no valid name: it goes through the convention as a plain word, and back afterwards.
    String converted = PROMETHEUS.name(name.replace(HOOK, "HOOKTYPE"), type.meter, baseUnit);
    if (type == Type.COUNTER && !converted.endsWith("_total")) {
      converted += "_total";
    }
    return converted.replace("HOOKTYPE", HOOK);
  }

  /** This metric of one hook type, {@code hookType} in place of {@value #HOOK}. */
  public Metric forHook(String hookType) {
    if (!name.contains(HOOK)) {
      throw new IllegalStateException(name + " is no hook's metric");
    }
    return new Metric(name.replace(HOOK, hookType), type, baseUnit, labels, help, binder);
  }

  /** A counter of this name and help; the caller adds the labels' values. */
  public Counter.Builder counter() {
    buildable(Type.COUNTER);
    return Counter.builder(name).description(help).baseUnit(baseUnit);
  }

  /** A counter that reads {@code count} from {@code source}, for a count kept elsewhere. */
  public <T> FunctionCounter.Builder<T> functionCounter(T source, ToDoubleFunction<T> count) {
    buildable(Type.COUNTER);
    return FunctionCounter.builder(name, source, count).description(help).baseUnit(baseUnit);
  }

  /** A gauge that reads {@code value} from {@code source}. */
  public <T> Gauge.Builder<T> gauge(T source, ToDoubleFunction<T> value) {
    buildable(Type.GAUGE);
    return Gauge.builder(name, source, value).description(help).baseUnit(baseUnit);
  }

  /** A gauge of {@code value}. */
  public Gauge.Builder<Supplier<Number>> gauge(Supplier<Number> value) {
    buildable(Type.GAUGE);
    return Gauge.builder(name, value).description(help).baseUnit(baseUnit);
  }

  /** A timer of this name and help; a {@link Type#HISTOGRAM histogram}'s caller sets its buckets. */
  public Timer.Builder timer() {
    if (type.meter != Meter.Type.TIMER) {
      throw new IllegalStateException(name + " is a " + type.prometheus + ", not a timer");
    }
    buildable(type);
    return Timer.builder(name).description(help);
  }

  private void buildable(Type wanted) {
    if (type != wanted) {
      throw new IllegalStateException(name + " is a " + type.prometheus + ", not a " + wanted.prometheus);
    }
    if (binder != null) {
      throw new IllegalStateException(name + " is registered by " + binder);
    }
    if (name.contains(HOOK)) {
      throw new IllegalStateException(name + " needs its hook type: forHook");
    }
  }
}
