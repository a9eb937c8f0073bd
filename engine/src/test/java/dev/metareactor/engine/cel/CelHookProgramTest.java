package dev.metareactor.engine.cel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.util.RawValue;

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
  void anObjectIsAMapAndAnArrayAListWhateverTheExpressionDoesWithThem() {
    JsonNode answer = evaluate("""
        {'equal': parent.spec == {'who': 'World', 'n': 3, 'x': null}, 'in': 'who' in parent.spec,
         'has': has(parent.spec.x), 'hasNot': has(parent.spec.y), 'size': parent.spec.size(),
         'keys': parent.spec.map(k, k), 'values': parent.spec.filter(k, k != 'x').map(k, parent.spec[k]),
         'merged': merge(parent.spec, {'n': 4}), 'json': toJson(parent.metadata), 'hash': sha256(parent.spec),
         'echo': request.parent.spec, 'list': [parent.spec.n] + [parent.spec.who]}""");

    assertThat(KubeJson.text(answer)).isEqualTo("{\"equal\":true,\"in\":true,\"has\":true,\"hasNot\":false,"
        + "\"size\":3,\"keys\":[\"who\",\"n\",\"x\"],\"values\":[\"World\",3],"
        + "\"merged\":{\"who\":\"World\",\"n\":4,\"x\":null},"
        + "\"json\":\"{\\\"name\\\":\\\"p1\\\",\\\"namespace\\\":\\\"ns\\\"}\","
        + "\"hash\":\"" + CelHelpers.sha256(java.util.Map.of("who", "World", "n", 3L, "x",
            dev.cel.common.values.NullValue.NULL_VALUE)) + "\","
        + "\"echo\":{\"who\":\"World\",\"n\":3,\"x\":null},\"list\":[3,\"World\"]}");
  }

  @Test
  void numbersAreWhatTheirJsonTextReadsAs() {
    // Trees the engine builds may hold numbers in any of Jackson's forms; the expression sees each as its text reads.
    ObjectNode input = KubeJson.nodes().objectNode();
    input.put("int", 7).put("long", 1L << 40).put("smallBig", BigInteger.TEN)
        .put("hugeBig", BigInteger.TEN.pow(30)).put("double", 0.5).put("float", 0.1f)
        .put("wholeDecimal", new BigDecimal("100")).put("decimal", new BigDecimal("2.5")).put("nan", Double.NaN);
    ObjectNode request = KubeJson.nodes().objectNode().set("input", input);
    String expression = "{'types': input.map(k, " + typeOf("input[k]") + "), 'float': input['float'],"
        + " 'hugeBig': input.hugeBig}";

    assertThat(KubeJson.text(CelHookProgram.compile(expression, CelLimits.DEFAULT).evaluate(request)))
        .isEqualTo("{\"types\":[\"int\",\"int\",\"int\",\"double\",\"double\",\"double\",\"int\","
            + "\"double\",\"string\"],\"float\":0.1,\"hugeBig\":1.0E30}");
  }

  @Test
  void anObservedObjectEmbeddedAsItsBytesReadsAsTheSameValuesAsItsTree() {
    String child = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        + "\"labels\":{\"a\":\"b\"}},\"data\":{\"n\":\"1\"},\"x\":[1,2.5,null,true,{\"y\":-3}]}";
    ObjectNode asTree = (ObjectNode) json("{\"children\": {\"ConfigMap.v1\": {\"c\": " + child + "}}}");
    ObjectNode asBytes = (ObjectNode) json("{\"children\": {\"ConfigMap.v1\": {}}}");
    ((ObjectNode) asBytes.get("children").get("ConfigMap.v1")).putRawValue("c", KubeObject.of(
        (ObjectNode) json(child)).raw());
    CelHookProgram program = CelHookProgram.compile("""
        {'echo': children['ConfigMap.v1'], 'name': children['ConfigMap.v1'].c.metadata.name,
         'x': children['ConfigMap.v1'].c.x.map(v, %s), 'same': children['ConfigMap.v1'].c ==
         request.children['ConfigMap.v1'].c}""".formatted(typeOf("v")), CelLimits.DEFAULT);

    JsonNode fromTree = program.evaluate(asTree);

    assertThat(KubeJson.text(program.evaluate(asBytes))).isEqualTo(KubeJson.text(fromTree));
    assertThat(KubeJson.text(fromTree)).contains("\"echo\":{\"c\":" + child + "}",
        "\"x\":[\"int\",\"double\",\"null_type\",\"bool\",\"map\"]", "\"same\":true");
  }

  @Test
  void whatTheExpressionDoesNotReadIsNeverRead() {
    // Bytes that are not JSON stand for an observed object: an expression that only counts or names the objects
    // answers, so none of them was read.
    ObjectNode request = (ObjectNode) json("{\"children\": {\"ConfigMap.v1\": {}}, \"finalizing\": false}");
    ObjectNode observed = (ObjectNode) request.get("children").get("ConfigMap.v1");
    observed.putRawValue("default/a", new RawValue("{not JSON"));
    observed.putRawValue("default/b", new RawValue("{not JSON"));

    JsonNode answer = CelHookProgram.compile("""
        {'count': children['ConfigMap.v1'].size(), 'names': children['ConfigMap.v1'].map(k, k),
         'all': children['ConfigMap.v1'].all(k, k.startsWith('default/'))}""", CelLimits.DEFAULT).evaluate(request);

    assertThat(KubeJson.text(answer))
        .isEqualTo("{\"count\":2,\"names\":[\"default/a\",\"default/b\"],\"all\":true}");
  }

  @Test
  void anAnswerJsonCannotHoldNamesWhereTheValueIs() {
    assertThatThrownBy(() -> evaluate("{'a': {'b': [1, 2.0 / 0.0]}}")).isInstanceOf(CelHookException.class)
        .hasMessage("the answer at a.b[1] is Infinity, which JSON cannot hold");
    assertThatThrownBy(() -> evaluate("{'a': [{1: 'x'}]}"))
        .hasMessage("the answer at a[0] has a key that is not a string: 1");
    assertThatThrownBy(() -> evaluate("{'a': [{'h': sha256({'b': {1: 2}})}]}"))
        .hasRootCauseMessage("the value at b has a key that is not a string: 1");
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

  /** A CEL expression naming the type of {@code value}'s value. */
  private static String typeOf(String value) {
    return ("type(V) == int ? 'int' : type(V) == double ? 'double' : type(V) == string ? 'string'"
        + " : type(V) == null_type ? 'null_type' : type(V) == bool ? 'bool' : type(V) == map ? 'map' : 'other'")
        .replace("V", value);
  }

  private static JsonNode zeros(int count) {
    return json("{\"input\": [" + "0,".repeat(count - 1) + "0]}");
  }
}
