package dev.metareactor.benchmarks;

import dev.metareactor.engine.controller.composite.CompositeSyncFixture;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * One whole sync of a CompositeController's parent as a worker runs it, against in-memory fakes
 * ({@link CompositeSyncFixture} from the engine's test-jar): the real {@code ObjectSync} and {@code CompositeSync} —
 * the parent and its children from the informer caches, the claim, the hook request, the answer parsed and checked,
 * the apply decision for every child, the status compared, the writes — with a {@link RecordingApi} in place of the
 * API server and the hook a lambda.
 *
 * <p>Workload, the load harness's ({@code benchmarks/load}): a parent whose spec names a value, a stamp and 3
 * children, and whose status is the hook's ({@code value}, {@code stamp}) plus {@code observedGeneration}; 3
 * ConfigMap children, each with a label and data {@code value}, {@code index} and a 256-byte {@code payload}, cached as
 * the engine created them (the setup syncs once with no children and caches what the 3 creates wrote: the
 * last-applied annotation, the {@code controller-uid} label, the ControllerRef). The hook stands for the hook client
 * without its transport: it serializes the request as the client does ({@code writeValueAsBytes}, 4,540 bytes) and
 * parses a prepared answer from its bytes (the 3 children and the status, 1,328 bytes).
 *
 * <ul>
 *   <li>{@code noOpSync} — the steady state (every resync, every event that changes nothing the hook reads): the
 *       hook answers what is cached and written, and the sync makes no request;</li>
 *   <li>{@code oneChildChangedSync} — the answer changes the first child's {@code data.value}, alternating between
 *       two values, and the sync makes exactly one request, that child's update. After each sync the child cache
 *       holds the object that update wrote, as the informer would after the watch event (the two objects are
 *       captured in the setup from real writes). The fake's write is in the number: it serializes the body in Go's
 *       form, as the engine's client does, and keeps a copy of the object.</li>
 * </ul>
 *
 * <p>The setup checks both claims (the requests each sync makes) and fails the run when either does not hold.
 *
 * <p>Command: {@code java -jar benchmarks/target/benchmarks.jar SyncBenchmark -prof gc} (10 x 3 s of warm-up, 5 x 3 s
 * measured, one fork); with the engine's JIT and collector, add
 * {@code -jvmArgsAppend "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
// C2 needs about 20 s on two shared cores before the score settles: 3 x 2 s of warm-up measured the JIT at work.
@Warmup(iterations = 10, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = Forks.NO_LOGGING)
public class SyncBenchmark {

  private static final String PARENT = "load-1";
  private static final String CHANGED_CHILD = PARENT + "-0";
  private static final int CHILDREN = 3;
  /** The fields of the hook's status: the value and the stamp of the spec it saw. */
  private static final String STATUS_FIELDS = "\"value\": \"v1\", \"stamp\": \"1795510800000000000\"";
  /** A small real ConfigMap's worth of data, as the load harness's hook pads its children. */
  private static final String PAYLOAD = IntStream.range(0, 256).mapToObj(i -> String.valueOf((char) ('a' + i % 26)))
      .collect(Collectors.joining());

  private final CompositeSyncFixture fixture = new CompositeSyncFixture(this::hook);
  /** The hook's answers: the first child's value {@code v1} (the steady state) and {@code v2}. */
  private final byte[][] answers = {answer("v1"), answer("v2")};
  /** The first child as the update to each answer wrote it. */
  private final KubeObject[] written = new KubeObject[2];
  /** Which answer the cached first child is the state of. */
  private int cached;
  /** What the hook answers now. */
  private byte[] answer = answers[0];
  /** The size of the last request the hook serialized (keeps the serialization's result in use). */
  int requestBytes;

  @Setup
  public void setUp() {
    KubeObject parent = fixture.parent(PARENT, "parent-uid", "{" + STATUS_FIELDS + ", \"children\": " + CHILDREN + "}",
        "{" + STATUS_FIELDS + ", \"observedGeneration\": 1}");
    List<String> creates = IntStream.range(0, CHILDREN)
        .mapToObj(i -> "create configmaps " + parent.namespace() + "/" + PARENT + "-" + i).toList();
    expect("the first sync", syncAnswering(0), creates);
    for (int i = 0; i < CHILDREN; i++) {
      fixture.configMaps().put(stored(PARENT + "-" + i));
    }
    expect("noOpSync", syncAnswering(0), List.of());

    List<String> oneUpdate = List.of("update configmaps " + parent.namespace() + "/" + CHANGED_CHILD);
    for (int value : new int[] {1, 0}) {
      expect("a sync changing " + CHANGED_CHILD, syncAnswering(value), oneUpdate);
      written[value] = stored(CHANGED_CHILD);
      fixture.configMaps().put(written[value]);
      cached = value;
    }
    for (int i = 0; i < 4; i++) {
      oneChildChangedSync();
      expect("oneChildChangedSync", fixture.api().actions(), oneUpdate);
    }
    expect("noOpSync after oneChildChangedSync", syncAnswering(0), List.of());
    fixture.api().clearActions();
  }

  @Benchmark
  public Optional<Duration> noOpSync() {
    answer = answers[0];
    return fixture.sync(PARENT);
  }

  @Benchmark
  public Optional<Duration> oneChildChangedSync() {
    fixture.api().clearActions(); // only the last sync's requests are kept
    int next = cached ^ 1;
    answer = answers[next];
    Optional<Duration> resync = fixture.sync(PARENT);
    fixture.configMaps().put(written[next]);
    cached = next;
    return resync;
  }

  /** The hook client without its transport: the request serialized, the answer parsed from its bytes. */
  private Mono<JsonNode> hook(JsonNode request, HookCaller.RootObject root) {
    return Mono.fromCallable(() -> {
      requestBytes = KubeJson.mapper().writeValueAsBytes(request).length;
      return KubeJson.mapper().readTree(answer);
    });
  }

  /** One sync with the hook answering {@code answers[value]}; the requests it made. */
  private List<RecordingApi.Action> syncAnswering(int value) {
    fixture.api().clearActions();
    answer = answers[value];
    fixture.sync(PARENT);
    return fixture.api().actions();
  }

  private KubeObject stored(String child) {
    return fixture.api().object(CompositeSyncFixture.CONFIG_MAPS, CompositeSyncFixture.NAMESPACE, child)
        .orElseThrow(() -> new IllegalStateException(child + " was never written"));
  }

  /** Fails the run when a sync made other requests than it should: the benchmark would not measure its claim. */
  private static void expect(String sync, List<RecordingApi.Action> made, List<String> expected) {
    List<String> requests = made.stream().map(RecordingApi.Action::toString).sorted().toList();
    if (!requests.equals(expected.stream().sorted().toList())) {
      throw new IllegalStateException(sync + " made the requests " + requests + ", expected " + expected);
    }
  }

  /** The hook's answer: {@value #CHILDREN} ConfigMaps, the first with {@code firstValue}, and the status. */
  private static byte[] answer(String firstValue) {
    String children = IntStream.range(0, CHILDREN).mapToObj(i -> """
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "%s-%d", "labels": {"bench.metareactor.dev/load": "true"}},
         "data": {"value": "%s", "index": "%d", "payload": "%s"}}"""
        .formatted(PARENT, i, i == 0 ? firstValue : "v1", i, PAYLOAD)).collect(Collectors.joining(", "));
    String answer = "{\"status\": {" + STATUS_FIELDS + "}, \"children\": [" + children + "]}";
    return KubeJson.bytes(KubeJson.mapper().readTree(answer)); // compact, as the load harness's hook writes it
  }
}
