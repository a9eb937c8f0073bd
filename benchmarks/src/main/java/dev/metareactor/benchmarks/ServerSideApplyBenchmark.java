package dev.metareactor.benchmarks;

import dev.metareactor.apply.FieldSet;
import dev.metareactor.apply.GoJson;
import dev.metareactor.apply.ServerSideApply;
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
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * What {@code --apply-strategy=server-side-apply} costs per child of a sync when nothing needs a request: the
 * decision "would this apply change anything", taken from the cache, on the workloads of {@link ApplyBenchmark}.
 *
 * <ul>
 *   <li>{@code noChange}: the first sync after the child or its desired state changed — the configuration made from
 *       the hook's object (a copy without system fields and status), the field set the manager owns read from the
 *       cached bytes of its {@code managedFields} entry, and the walk that answers "unchanged";</li>
 *   <li>{@code remembered}: every later resync of the converged child — the engine remembers the verdict with the
 *       child's resourceVersion and a fingerprint of the desired object, so what it computes is the fingerprint
 *       (the Go serialization into a reused buffer, hashed);</li>
 *   <li>{@code oneFieldChange}: the same with one field changed (an image, replicas, a data value, a list item):
 *       "changed", and the engine applies.</li>
 * </ul>
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar ServerSideApplyBenchmark -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ServerSideApplyBenchmark {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  @Param({"pod", "deployment", "configmap200", "cr1000"})
  public String workload;

  private ApplyWorkloads.Workload inputs;
  /** The manager's {@code fieldsV1} as the cache keeps it: bytes. */
  private byte[] appliedFields;

  @Setup
  public void setUp() {
    inputs = ApplyWorkloads.named(workload);
    appliedFields = MAPPER.writeValueAsBytes(ApplyWorkloads.appliedFields(
        ServerSideApply.configuration(inputs.desired()), inputs.observed()));
    if (!noChange()) {
      throw new IllegalStateException(workload + ": observed object is not the steady state of the apply");
    }
    if (oneFieldChange()) {
      throw new IllegalStateException(workload + ": the one-field change is not detected");
    }
  }

  @Benchmark
  public boolean noChange() {
    return unchanged(inputs.desired());
  }

  @Benchmark
  public long remembered() {
    return GoJson.fingerprint(inputs.desired());
  }

  @Benchmark
  public boolean oneFieldChange() {
    return unchanged(inputs.changed());
  }

  private boolean unchanged(ObjectNode desired) {
    ObjectNode configuration = ServerSideApply.configuration(desired);
    return ServerSideApply.unchanged(inputs.observed(), configuration, FieldSet.parse(appliedFields));
  }
}
