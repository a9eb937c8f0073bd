package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * Byte-for-byte agreement with Go. {@code gojson-golden.json} was produced by Go itself
 * ({@code src/test/go/gojson-golden}) from {@code gojson-inputs.json}: each input decoded as Kubernetes decodes
 * JSON, then {@code json.Marshal}-ed, plus {@code fmt.Sprintf("%v")} for floats.
 */
class GoJsonTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  /** One input; for a number also the create and update bodies Metacontroller sends with it (else null). */
  record Golden(String input, String go, String goFmtV, String goCreate, String goUpdate) {
    @Override
    public String toString() {
      return input.length() > 60 ? input.substring(0, 60) + "..." : input;
    }
  }

  static List<Golden> goldens() throws IOException {
    try (InputStream in = GoJsonTest.class.getResourceAsStream("/gojson-golden.json")) {
      List<Golden> cases = new ArrayList<>();
      for (JsonNode item : MAPPER.readTree(in)) {
        cases.add(new Golden(item.get("input").stringValue(), item.get("go").stringValue(),
            optional(item, "goFmtV"), optional(item, "goCreate"), optional(item, "goUpdate")));
      }
      return cases;
    }
  }

  private static String optional(JsonNode item, String field) {
    return item.has(field) ? item.get(field).stringValue() : null;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("goldens")
  void marshalsExactlyAsGo(Golden golden) {
    JsonNode parsed = MAPPER.readTree(golden.input());
    assertThat(GoJson.marshal(parsed)).isEqualTo(golden.go());
    assertThat(GoJson.marshalUtf8(parsed)).isEqualTo(golden.go().getBytes(StandardCharsets.UTF_8));
    assertThat(GoJson.marshalsTo(parsed, golden.go())).isTrue();
    assertThat(GoJson.marshalsTo(parsed, golden.go() + " ")).isFalse();
    assertThat(GoJson.marshalsTo(parsed, golden.go().substring(0, golden.go().length() - 1))).isFalse();
    if (golden.goFmtV() != null) {
      assertThat(GoJson.goFormatV(parsed.doubleValue())).isEqualTo(golden.goFmtV());
    }
  }

  @Test
  void goldenFileCoversTheEscapingAndNumberRules() throws IOException {
    List<Golden> cases = goldens();
    assertThat(cases).hasSizeGreaterThan(30);
    assertThat(cases).extracting(Golden::go).anyMatch(s -> s.contains("\\u003c") && s.contains("\\u0026"));
    assertThat(cases).extracting(Golden::go).anyMatch(s -> s.contains("\\u2028"));
    assertThat(cases).extracting(Golden::go).contains("9007199254740993", "1e+21", "1e-7", "1");
    assertThat(cases).filteredOn(golden -> golden.goCreate() != null).extracting(Golden::input)
        .contains("-0.0", "-0", "1e20", "1E+2", "100.0", "2.0", "123456789012345678901234",
            "-123456789012345678901234", "1e21", "0.000001", "1e-7");
  }

  @Test
  void unpairedSurrogateBecomesReplacementCharacter() {
    JsonNode text = JsonNodeFactory.instance.stringNode("a\uD800b\uDC00c\uD800");
    assertThat(GoJson.marshal(text)).isEqualTo("\"a\uFFFDb\uFFFDc\uFFFD\"");
    assertThat(GoJson.marshalUtf8(text)).isEqualTo("\"a\uFFFDb\uFFFDc\uFFFD\"".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void marshalsToComparesTextNotBytes() {
    JsonNode accented = JsonNodeFactory.instance.stringNode("\u00e9");
    assertThat(GoJson.marshalsTo(accented, "\"\u00e9\"")).isTrue();
    assertThat(GoJson.marshalsTo(accented, "\"\u00c3\u00a9\"")).as("its UTF-8 bytes read as Latin-1").isFalse();
    assertThat(GoJson.marshalsTo(accented, "\"e\"")).isFalse();
    JsonNode plain = JsonNodeFactory.instance.objectNode().put("a", 1);
    assertThat(GoJson.marshalsTo(plain, "{\"a\":2}")).isFalse();
    assertThat(GoJson.marshalsTo(plain, "{\"a\":1}")).isTrue();
    assertThat(GoJson.marshalsTo(plain, "{\"a\":10}")).isFalse();
  }

  @Test
  void outputOfAnySizeIsComplete() {
    // Past the reused buffer's first size, and past the size a thread keeps; then small again.
    for (int length : new int[] {10, 5_000, 3_000_000, 10}) {
      String text = "\u00e9\uD83D\uDE00<x>".repeat(length);
      String expected = "\"" + text.replace("<", "\\u003c").replace(">", "\\u003e") + "\"";
      JsonNode node = JsonNodeFactory.instance.stringNode(text);
      assertThat(GoJson.marshal(node)).isEqualTo(expected);
      assertThat(GoJson.marshalUtf8(node)).isEqualTo(expected.getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void keysSortByCodePointNotUtf16() {
    // U+FFFF sorts before U+1F600 by code point (and by UTF-8 bytes) but after it in UTF-16 order.
    assertThat(GoJson.CODE_POINT_ORDER.compare("\uFFFF", "\uD83D\uDE00")).isNegative();
    assertThat(GoJson.CODE_POINT_ORDER.compare("a", "b")).isNegative();
    assertThat(GoJson.CODE_POINT_ORDER.compare("ab", "a")).isPositive();
  }

  @Test
  void nonFiniteNumbersAreRejected() {
    assertThatThrownBy(() -> GoJson.marshal(JsonNodeFactory.instance.numberNode(Double.NaN)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
