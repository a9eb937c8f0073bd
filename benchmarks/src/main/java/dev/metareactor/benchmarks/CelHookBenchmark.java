package dev.metareactor.benchmarks;

import dev.metareactor.engine.cel.CelHookProgram;
import dev.metareactor.engine.cel.CelLimits;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One evaluation of a CEL sync hook ({@link CelHookProgram#evaluate}), on the load harness's shapes: a parent whose
 * spec names a value and 3 children, and 3 observed ConfigMaps with a label and data {@code value}, {@code index} and
 * a 256-byte {@code payload}; the expression answers the 3 children and a status, as the harness's Go hook does.
 *
 * <ul>
 *   <li>{@code celEvaluate} — the whole evaluation: the request's fields made CEL values, the expression evaluated
 *       under its cost budget, the answer turned into JSON;</li>
 *   <li>{@code webhookClientSide} — what a webhook call costs the engine besides the network and the hook's own
 *       work: the request serialized and an answer of the same content parsed from its bytes.</li>
 * </ul>
 *
 * <p>{@code shape}: {@code tree}, the request parsed whole from its text; {@code engine}, the request as the engine
 * builds it ({@code ObjectSync}): the observed children embedded as their cached bytes, unparsed.
 *
 * <p>Command: {@code java -jar benchmarks/target/benchmarks.jar CelHookBenchmark -f 1 -wi 3 -i 5 -w 2s -r 2s
 * -prof gc}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = Forks.NO_LOGGING)
public class CelHookBenchmark {

  static final String EXPRESSION = """
      {'children': parent.spec.names.map(n, {'apiVersion': 'v1', 'kind': 'ConfigMap',
         'metadata': {'name': parent.metadata.name + '-' + n, 'labels': {'app': 'load'}},
         'data': {'value': parent.spec.value, 'index': n, 'payload': parent.spec.payload}}),
       'status': {'children': parent.spec.names.size(), 'observed': children['ConfigMap.v1'].size()}}""";

  @Param({"tree", "engine"})
  public String shape;

  private CelHookProgram program;
  private JsonNode request;
  private byte[] answer;

  @Setup
  public void setUp() {
    program = CelHookProgram.compile(EXPRESSION, CelLimits.DEFAULT);
    ObjectNode tree = (ObjectNode) KubeJson.mapper().readTree(request());
    request = shape.equals("engine") ? withRawChildren(tree) : tree;
    answer = KubeJson.bytes(program.evaluate(request));
  }

  /** {@code request} with each observed child as the engine embeds it: a cached object's bytes. */
  static ObjectNode withRawChildren(ObjectNode request) {
    ObjectNode group = (ObjectNode) request.get("children").get("ConfigMap.v1");
    List<Map.Entry<String, JsonNode>> children = new ArrayList<>(group.properties());
    for (Map.Entry<String, JsonNode> child : children) {
      group.putRawValue(child.getKey(), KubeObject.of((ObjectNode) child.getValue()).raw());
    }
    return request;
  }

  static String request() {
    String payload = "x".repeat(256);
    StringBuilder children = new StringBuilder();
    for (int i = 0; i < 3; i++) {
      children.append(i == 0 ? "" : ",").append("""
          "default/p-%d": {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "p-%d", "namespace": "default", "uid": "u-%d", "resourceVersion": "1%d",
              "labels": {"app": "load", "controller-uid": "parent-uid"}},
            "data": {"value": "v1", "index": "%d", "payload": "%s"}}""".formatted(i, i, i, i, i, payload));
    }
    return """
        {"controller": {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
                        "metadata": {"name": "load"}},
         "parent": {"apiVersion": "load.metareactor.dev/v1", "kind": "Load",
                    "metadata": {"name": "p", "namespace": "default", "uid": "parent-uid", "generation": 1},
                    "spec": {"value": "v1", "names": ["0", "1", "2"], "payload": "%s"}},
         "children": {"ConfigMap.v1": {%s}}, "related": {}, "finalizing": false}""".formatted(payload, children);
  }

  @Benchmark
  public JsonNode celEvaluate() {
    return program.evaluate(request);
  }

  @Benchmark
  public JsonNode webhookClientSide() {
    byte[] sent = KubeJson.bytes(request);
    return sent.length > 0 ? KubeJson.mapper().readTree(answer) : null;
  }
}
