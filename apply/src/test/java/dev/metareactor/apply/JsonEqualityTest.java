package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class JsonEqualityTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private static boolean eq(String a, String b) {
    JsonNode x = MAPPER.readTree(a);
    JsonNode y = MAPPER.readTree(b);
    boolean forward = JsonEquality.equal(x, y);
    assertThat(JsonEquality.equal(y, x)).as("symmetric").isEqualTo(forward);
    return forward;
  }

  @Test
  void numbersCompareByValue() {
    assertThat(eq("1", "1.0")).isTrue();
    assertThat(eq("1000", "1e3")).isTrue();
    assertThat(eq("9007199254740993", "9007199254740993")).isTrue();
    assertThat(eq("9007199254740993", "9007199254740992.0")).isFalse();
    assertThat(eq("12345678901234567890", "12345678901234567890")).isTrue();
    assertThat(eq("0.1", "0.10")).isTrue();
    assertThat(eq("1", "2")).isFalse();
    assertThat(eq("1.5", "1")).isFalse();
    assertThat(eq("-0.0", "0")).isTrue();
  }

  @Test
  void numbersBeyondInt64CompareAsTheFloat64GoDecodesThemTo() {
    // What a server stores (and returns) for a desired integer beyond int64 is Go's float64 of it.
    assertThat(eq("123456789012345678901234", "1.2345678901234569e+23")).isTrue();
    assertThat(eq("-123456789012345678901234", "-1.2345678901234569e+23")).isTrue();
    assertThat(eq("12345678901234567890", "12345678901234567000")).isTrue();
    assertThat(eq("1e20", "100000000000000000000")).isTrue();
    assertThat(eq("123456789012345678901234", "1.2345678901234567e+23")).isFalse();
    // Within int64 an integer is exact, and equals a float64 only of exactly its value.
    assertThat(eq("9223372036854775807", "9.223372036854775807e18")).isFalse();
    assertThat(eq("9223372036854775807", "9223372036854775808")).isFalse();
  }

  @Test
  void typesStillMatter() {
    assertThat(eq("\"1\"", "1")).isFalse();
    assertThat(eq("true", "\"true\"")).isFalse();
    assertThat(eq("[]", "{}")).isFalse();
    assertThat(eq("null", "false")).isFalse();
  }

  @Test
  void nullMemberEqualsAbsentMember() {
    assertThat(eq("{\"a\":1,\"b\":null}", "{\"a\":1}")).isTrue();
    assertThat(eq("{\"a\":null}", "{\"b\":null}")).isTrue();
    assertThat(eq("{\"a\":1,\"b\":null}", "{\"a\":1,\"b\":2}")).isFalse();
    assertThat(eq("{\"a\":1}", "{\"a\":1,\"c\":3}")).isFalse();
  }

  @Test
  void arraysCompareInOrder() {
    assertThat(eq("[1,2]", "[1,2]")).isTrue();
    assertThat(eq("[1,2]", "[2,1]")).isFalse();
    assertThat(eq("[1,2]", "[1,2,3]")).isFalse();
    assertThat(eq("[null]", "[]")).isFalse();
  }

  @Test
  void nestedStructures() {
    assertThat(eq("{\"a\":{\"b\":[{\"c\":1.0}]}}", "{\"a\":{\"b\":[{\"c\":1}]}}")).isTrue();
    assertThat(eq("{\"a\":{\"b\":[{\"c\":1.0}]}}", "{\"a\":{\"b\":[{\"c\":\"1\"}]}}")).isFalse();
  }
}
