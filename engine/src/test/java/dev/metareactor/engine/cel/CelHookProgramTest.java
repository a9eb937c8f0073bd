package dev.metareactor.engine.cel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.kube.KubeJson;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class CelHookProgramTest {

  private static final JsonNode REQUEST = json("""
      {"controller": {"metadata": {"name": "hello"}},
       "parent": {"metadata": {"name": "p1", "namespace": "ns"}, "spec": {"who": "World", "n": 3, "x": null}},
       "children": {"ConfigMap.v1": {}}, "related": {}, "finalizing": false}""");

  private static JsonNode json(String text) {
    return KubeJson.mapper().readTree(text);
  }

  private static JsonNode evaluate(String expression) {
    return CelHookProgram.compile(expression, CelLimits.DEFAULT).evaluate(REQUEST);
  }

  @Test
  void theAnswerIsTheObjectTheExpressionMakesFromTheRequestsFields() {
    JsonNode answer = evaluate("""
        {'status': {'message': 'Hello, ' + parent.spec.who, 'n': parent.spec.n + 1, 'x': parent.spec.x,
          'finalizing': finalizing, 'owned': children['ConfigMap.v1'].size(), 'ratio': 0.5},
         'children': [], 'object': object, 'controller': request.controller.metadata.name}""");

    assertThat(KubeJson.text(answer)).isEqualTo("{\"status\":{\"message\":\"Hello, World\",\"n\":4,\"x\":null,"
        + "\"finalizing\":false,\"owned\":0,\"ratio\":0.5},\"children\":[],\"object\":null,\"controller\":\"hello\"}");
  }

  @Test
  void aCompileErrorNamesItsLineAndColumn() {
    assertThatThrownBy(() -> CelHookProgram.compile("{'a':\n  1 +}", CelLimits.DEFAULT))
        .isInstanceOf(CelHookException.class).hasMessageStartingWith("2:6: ");
    assertThatThrownBy(() -> CelHookProgram.compile("{'a': prent.spec}", CelLimits.DEFAULT))
        .hasMessage("1:7: undeclared reference to 'prent' (in container '')");
  }

  @Test
  void anExpressionThatCannotMakeAnObjectIsRefusedWhenCompiled() {
    assertThatThrownBy(() -> CelHookProgram.compile("'hello'", CelLimits.DEFAULT))
        .hasMessageContaining("makes a string; a hook's answer is an object");
  }

  @Test
  void aDynamicValueThatIsNotAnObjectFailsTheEvaluation() {
    CelHookProgram program = CelHookProgram.compile("parent.spec.who", CelLimits.DEFAULT);

    assertThatThrownBy(() -> program.evaluate(REQUEST)).isInstanceOf(CelHookException.class)
        .hasMessage("the CEL hook made \"World\"; a hook's answer is an object");
  }

  @Test
  void anErrorInTheEvaluationSaysWhat() {
    assertThatThrownBy(() -> evaluate("{'a': parent.spec.missing}")).isInstanceOf(CelHookException.class)
        .hasMessageContaining("the CEL hook failed").hasMessageContaining("'missing'");
  }

  @Test
  void helpersFormatHashEncodeAndMerge() {
    JsonNode answer = evaluate("""
        {'name': '%s-%d-%%'.format([parent.metadata.name, parent.spec.n]),
         'same': sha256({'a': 1, 'b': [true]}) == sha256({'b': [true], 'a': 1}),
         'hash': sha256('x').size(),
         'json': toJson({'b': 1, 'a': 'x'}),
         'b64': base64.encode(bytes(parent.spec.who)),
         'merged': merge({'a': {'x': 1, 'y': 2}, 'b': 1}, {'a': {'y': 3}, 'c': 4}),
         'optional': parent.?spec.?size.orValue(7),
         'upper': parent.spec.who.upperAscii()}""");

    assertThat(KubeJson.text(answer)).isEqualTo("{\"name\":\"p1-3-%\",\"same\":true,\"hash\":64,"
        + "\"json\":\"{\\\"b\\\":1,\\\"a\\\":\\\"x\\\"}\",\"b64\":\"V29ybGQ=\","
        + "\"merged\":{\"a\":{\"x\":1,\"y\":3},\"b\":1,\"c\":4},\"optional\":7,\"upper\":\"WORLD\"}");
  }

  @Test
  void anEvaluationOverItsCostLimitStops() {
    CelHookProgram program = CelHookProgram.compile(
        "{'a': [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(y, x * y))}",
        new CelLimits(100, Duration.ofSeconds(10)));

    assertThatThrownBy(() -> program.evaluate(REQUEST)).isInstanceOf(CelHookException.class)
        .hasMessage("the CEL hook went over its cost limit of 100");
  }

  @Test
  void theSameEvaluationWithinItsCostLimitAnswers() {
    CelHookProgram program = CelHookProgram.compile(
        "{'a': [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(y, x * y))}",
        new CelLimits(10_000, Duration.ofSeconds(10)));

    assertThat(program.evaluate(REQUEST).path("a").get(9).get(9).asLong()).isEqualTo(100);
  }

  @Test
  void aMapOverAThousandElementsCostsAboutAMillion() {
    JsonNode thousand = zeros(1_000);
    String expression = "{'n': input.map(x, x + 1).size()}";

    assertThat(CelHookProgram.compile(expression, new CelLimits(1_100_000, Duration.ofSeconds(30)))
        .evaluate(thousand).path("n").asLong()).isEqualTo(1_000);
    assertThatThrownBy(() -> CelHookProgram.compile(expression, new CelLimits(1_000_000, Duration.ofSeconds(30)))
        .evaluate(thousand)).hasMessage("the CEL hook went over its cost limit of 1000000");
  }

  @Test
  void anEvaluationOverItsTimeoutStops() {
    CelHookProgram program = CelHookProgram.compile("{'a': [1, 2, 3].map(x, x * 2)}",
        new CelLimits(1_000_000, Duration.ofNanos(1)));

    assertThatThrownBy(() -> program.evaluate(REQUEST)).isInstanceOf(CelHookException.class)
        .hasMessage("the CEL hook went over its timeout of 0 ms");
  }

  @Test
  void aComprehensionHasAtMostItsIterations() {
    CelHookProgram program = CelHookProgram.compile("{'any': input.exists(x, x == 1)}",
        new CelLimits(Long.MAX_VALUE, Duration.ofSeconds(30)));

    assertThat(program.evaluate(zeros(10)).path("any").asBoolean()).isFalse();
    assertThatThrownBy(() -> program.evaluate(zeros(CelHookProgram.MAX_ITERATIONS + 1)))
        .isInstanceOf(CelHookException.class).hasMessageContaining("Iteration budget exceeded");
  }

  private static JsonNode zeros(int count) {
    return json("{\"input\": [" + "0,".repeat(count - 1) + "0]}");
  }
}
