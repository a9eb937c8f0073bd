package dev.metareactor.engine.selector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

class LabelSelectorTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  @Test
  void stringFormCoversEveryOperator() {
    LabelSelector selector = LabelSelector.parse("app=web, tier!=db,env in (prod, staging),zone notin"
        + " (a),team,!legacy");
    assertThat(selector.matches(Map.of("app", "web", "env", "prod", "team", "x"))).isTrue();
    assertThat(selector.matches(Map.of("app", "web", "env", "prod", "team", "x", "tier", "db"))).isFalse();
    assertThat(selector.matches(Map.of("app", "web", "env", "dev", "team", "x"))).isFalse();
    assertThat(selector.matches(Map.of("app", "web", "env", "prod", "team", "x", "zone", "a"))).isFalse();
    assertThat(selector.matches(Map.of("app", "web", "env", "prod"))).isFalse();
    assertThat(selector.matches(Map.of("app", "web", "env", "prod", "team", "x", "legacy", "1"))).isFalse();
    assertThat(LabelSelector.parse("a==b").matches(Map.of("a", "b"))).isTrue();
    assertThat(selector.requiredLabels()).isEqualTo(Map.of("app", "web"));
  }

  @Test
  void blankIsEverything() {
    assertThat(LabelSelector.parse("").isEmpty()).isTrue();
    assertThat(LabelSelector.parse("  ").matches(Map.of())).isTrue();
    assertThat(LabelSelector.fromApi(null).matches(Map.of("x", "y"))).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"a=b,", "=b", "a in b", "a in (b", "a foo (b)", "a=b c", "-a=b", "a=-b-"})
  void badStringFormsAreRejected(String text) {
    assertThatThrownBy(() -> LabelSelector.parse(text)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("label selector");
  }

  @Test
  void apiFormCoversMatchLabelsAndExpressions() {
    LabelSelector selector = LabelSelector.fromApi(MAPPER.readTree("""
        {"matchLabels": {"app": "web"},
         "matchExpressions": [
           {"key": "env", "operator": "In", "values": ["prod", "staging"]},
           {"key": "tier", "operator": "NotIn", "values": ["db"]},
           {"key": "team", "operator": "Exists"},
           {"key": "legacy", "operator": "DoesNotExist"}]}"""));
    assertThat(selector.matches(Map.of("app", "web", "env", "staging", "team", "t"))).isTrue();
    assertThat(selector.matches(Map.of("app", "web", "env", "staging", "team", "t", "tier", "db"))).isFalse();
    assertThat(selector.matches(Map.of("app", "api", "env", "staging", "team", "t"))).isFalse();
    assertThat(selector.toString()).isEqualTo("app=web,env in (prod,staging),tier!=db,team,!legacy");
  }

  @Test
  void apiFormErrorsNameTheField() {
    assertThatThrownBy(() -> LabelSelector.fromApi(MAPPER.readTree("{\"matchExpressions\":["
        + "{\"key\":\"a\",\"operator\":\"Near\"}]}")))
        .hasMessageContaining("\"Near\" is not a valid label selector operator");
    assertThatThrownBy(() -> LabelSelector.fromApi(MAPPER.readTree("{\"matchExpressions\":["
        + "{\"key\":\"a\",\"operator\":\"In\"}]}")))
        .hasMessageContaining("values must be non-empty");
    assertThatThrownBy(() -> LabelSelector.fromApi(MAPPER.readTree("{\"matchLabels\":{\"a\":1}}")))
        .hasMessageContaining("matchLabels.a must be a string");
    assertThatThrownBy(() -> LabelSelector.fromApi(MAPPER.readTree("{\"matchExpressions\":["
        + "{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}")))
        .hasMessageContaining("values must be empty");
  }
}
