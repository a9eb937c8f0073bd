package dev.metareactor.benchmarks;

import dev.metareactor.apply.ApplyResult;
import dev.metareactor.apply.DynamicApply;
import dev.metareactor.apply.GoJson;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The apply engine on realistic children, per sync of one child.
 *
 * <p>Workloads ({@link ApplyWorkloads}): {@code pod} (three containers with ports, env and volume mounts,
 * server defaults and status on the live object), {@code deployment} (a two-level pod template),
 * {@code configmap200} (200 data keys), {@code cr1000} (a custom resource with a 1,000-item associative list,
 * every item carrying a field another controller wrote). Each live object is the steady state of its desired
 * object: created by the engine, then defaulted by the server.
 *
 * <ul>
 *   <li>{@code noChange}: the hook returns the same object again — the common case on every resync; the
 *       answer must be "unchanged" with as little work and garbage as possible;</li>
 *   <li>{@code oneFieldChange}: one field differs (an image, replicas, one data value, one list item); the
 *       full three-way merge runs and yields the object to write;</li>
 *   <li>{@code lastAppliedSerialization}: Go-identical serialization of the desired object alone;</li>
 *   <li>{@code requestBody}: the bytes of an update of the live object as the engine sends them (the same
 *       serialization, as UTF-8).</li>
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar ApplyBenchmark -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ApplyBenchmark {

  @Param({"pod", "deployment", "configmap200", "cr1000"})
  public String workload;

  private ApplyWorkloads.Workload inputs;

  @Setup
  public void setUp() {
    inputs = ApplyWorkloads.named(workload);
    if (DynamicApply.update(inputs.observed(), inputs.desired()).changed()) {
      throw new IllegalStateException(workload + ": observed object is not the steady state of desired");
    }
    if (!DynamicApply.update(inputs.observed(), inputs.changed()).changed()) {
      throw new IllegalStateException(workload + ": the one-field change is not detected");
    }
  }

  @Benchmark
  public ApplyResult noChange() {
    return DynamicApply.update(inputs.observed(), inputs.desired());
  }

  @Benchmark
  public ApplyResult oneFieldChange() {
    return DynamicApply.update(inputs.observed(), inputs.changed());
  }

  @Benchmark
  public String lastAppliedSerialization() {
    return GoJson.marshal(inputs.desired());
  }

  @Benchmark
  public byte[] requestBody() {
    return GoJson.marshalUtf8(inputs.observed());
  }
}
