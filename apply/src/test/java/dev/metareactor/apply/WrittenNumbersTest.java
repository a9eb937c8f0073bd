package dev.metareactor.apply;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The bytes of the objects written for a desired number, against the bodies Metacontroller sends
 * ({@code goCreate}, {@code goUpdate} in {@code gojson-golden.json}, made by Go from the same two objects): a
 * create, and an update where the number and another field change. The engine sends
 * {@link GoJson#marshalUtf8} of the apply result (plus its ControllerRef on a create).
 */
class WrittenNumbersTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  /** The same two texts as {@code desiredTemplate} and {@code observedTemplate} in {@code gojson-golden/main.go}. */
  private static final String DESIRED = "{\"apiVersion\":\"ex.com/v1\",\"kind\":\"Thing\","
      + "\"metadata\":{\"name\":\"t\"},\"spec\":{\"n\":%s,\"note\":\"b\"}}";
  private static final String OBSERVED = "{\"apiVersion\":\"ex.com/v1\",\"kind\":\"Thing\",\"metadata\":{"
      + "\"annotations\":{\"metacontroller.k8s.io/last-applied-configuration\":"
      + "\"{\\\"apiVersion\\\":\\\"ex.com/v1\\\",\\\"kind\\\":\\\"Thing\\\","
      + "\\\"metadata\\\":{\\\"name\\\":\\\"t\\\"},\\\"spec\\\":{\\\"n\\\":2,\\\"note\\\":\\\"a\\\"}}\"},"
      + "\"name\":\"t\",\"namespace\":\"ns\",\"resourceVersion\":\"7\",\"uid\":\"u-1\"},"
      + "\"spec\":{\"n\":2,\"note\":\"a\",\"port\":80},\"status\":{\"ratio\":0.5}}";

  static List<GoJsonTest.Golden> numbers() throws IOException {
    return GoJsonTest.goldens().stream().filter(golden -> golden.goCreate() != null).toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("numbers")
  void createdObjectIsWhatGoSends(GoJsonTest.Golden golden) {
    ApplyResult created = DynamicApply.apply(null, desired(golden.input()));
    assertThat(utf8(created)).isEqualTo(golden.goCreate());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("numbers")
  void updatedObjectIsWhatGoSends(GoJsonTest.Golden golden) {
    ApplyResult updated = DynamicApply.apply(observed(), desired(golden.input()));
    assertThat(updated.changed()).isTrue();
    assertThat(utf8(updated)).isEqualTo(golden.goUpdate());
  }

  /**
   * {@code 2.0} over the {@code 2} the child holds is no change (Metacontroller reports one and rewrites the child
   * with the same bytes); when another field changes, the written value is the desired one as Go writes it.
   */
  @Test
  void twoPointZeroOverTwoIsNoChangeAndIsWrittenAsTwo() {
    ObjectNode sameNote = (ObjectNode) MAPPER.readTree(DESIRED.formatted("2.0").replace("\"b\"", "\"a\""));
    assertThat(DynamicApply.apply(observed(), sameNote).changed()).isFalse();

    ApplyResult otherNote = DynamicApply.apply(observed(), desired("2.0"));
    assertThat(otherNote.changed()).isTrue();
    assertThat(utf8(otherNote)).contains("\"spec\":{\"n\":2,\"note\":\"b\",\"port\":80}").doesNotContain("2.0");
  }

  private static ObjectNode desired(String number) {
    return (ObjectNode) MAPPER.readTree(DESIRED.formatted(number));
  }

  private static ObjectNode observed() {
    return (ObjectNode) MAPPER.readTree(OBSERVED);
  }

  private static String utf8(ApplyResult result) {
    return new String(GoJson.marshalUtf8(result.object()), StandardCharsets.UTF_8);
  }
}
