package dev.metareactor.engine.hook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.hook.SyncResponse.UnknownFields;
import dev.metareactor.engine.kube.KubeJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** A field of a hook's answer is accepted by the strict check exactly when it is declared where it is read. */
class AnswerFieldsTest {

  private static final AnswerField<Integer> SIZE = new AnswerField<>("size", value -> {
    if (value == null || value.isNull()) {
      return 0;
    }
    if (!value.isInt()) {
      throw new HookResponseException("size must be an integer, got " + value.getNodeType());
    }
    return value.intValue();
  });
  private static final AnswerField<String> COLOR =
      new AnswerField<>("color", value -> value == null ? "none" : value.asString());
  private static final AnswerFields FIELDS = AnswerFields.of(SIZE);

  private final List<String> unknown = new ArrayList<>();

  private static JsonNode json(String text) {
    return KubeJson.mapper().readTree(text);
  }

  @Test
  void aDeclaredFieldIsAcceptedInStrictModeAndReadThroughItsDeclaration() {
    AnswerFields.Values values = FIELDS.read(json("{\"size\": 3}"), Set.of(), UnknownFields.STRICT, unknown::add);

    assertThat(values.get(SIZE)).isEqualTo(3);
    assertThat(FIELDS.read(json("{}")).get(SIZE)).as("absent: the reader's default").isZero();
    assertThat(unknown).isEmpty();
  }

  @Test
  void anUndeclaredFieldIsRefusedInStrictModeAndToldInLooseMode() {
    assertThatThrownBy(() -> FIELDS.read(json("{\"size\": 3, \"color\": \"red\"}"), Set.of(), UnknownFields.STRICT,
        unknown::add))
        .isInstanceOf(HookResponseException.class)
        .hasMessage("strict validation failed: unknown field \"color\"");

    FIELDS.read(json("{\"size\": 3, \"color\": \"red\"}"), Set.of(), UnknownFields.LOOSE, unknown::add);
    assertThat(unknown).containsExactly("color");
  }

  @Test
  void aFieldReadElsewhereIsAcceptedButNotRead() {
    AnswerFields.Values values = FIELDS.read(json("{\"size\": 3, \"color\": \"red\"}"), Set.of("color"),
        UnknownFields.STRICT, unknown::add);

    assertThatThrownBy(() -> values.get(COLOR))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("answer field color is not declared where it is read");
    assertThat(AnswerFields.of(COLOR).read(json("{\"size\": 3, \"color\": \"red\"}")).get(COLOR)).isEqualTo("red");
  }

  @Test
  void aWrongValueIsRefusedByItsReaderAndAWrongAnswerWhole() {
    assertThatThrownBy(() -> FIELDS.read(json("{\"size\": \"big\"}")))
        .isInstanceOf(HookResponseException.class).hasMessage("size must be an integer, got STRING");
    assertThatThrownBy(() -> FIELDS.about("customize hook").read(json("[]"), Set.of(), UnknownFields.LOOSE,
        unknown::add))
        .isInstanceOf(HookResponseException.class)
        .hasMessage("customize hook: response must be a JSON object, got ARRAY");
  }

  @Test
  void aFieldIsDeclaredOnce() {
    assertThatThrownBy(() -> AnswerFields.of(SIZE, SIZE)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FIELDS.with(new AnswerField<>("size", value -> 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("answer field size declared twice");
  }
}
