package dev.metareactor.engine.hook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.HookSpec.HookVersion;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class SyncResponseTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private static SyncResponse parse(String body, SyncResponse.UnknownFields mode, List<String> unknown) {
    JsonNode node = MAPPER.readTree(body);
    return SyncResponse.parse(node, "children", mode, unknown::add);
  }

  @Test
  void parsesAFullResponse() {
    List<String> unknown = new ArrayList<>();
    SyncResponse response = parse("""
        {"status": {"replicas": 1},
         "children": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "labels": {"app": "web"}}}],
         "resyncAfterSeconds": 0.1, "finalized": true, "extra": 1}""", SyncResponse.UnknownFields.LOOSE, unknown);
    assertThat(response.status().get("replicas").intValue()).isEqualTo(1);
    assertThat(response.children()).hasSize(1);
    assertThat(response.resyncAfter()).isEqualTo(Duration.ofMillis(100));
    assertThat(response.finalized()).isTrue();
    assertThat(unknown).containsExactly("extra");
  }

  @Test
  void eventsAreParsedWithTheirTypeReasonAndACappedMessageEvenInStrictMode() {
    SyncResponse response = parse("""
        {"events": [{"type": "Normal", "reason": "BackupTaken", "message": "backup 7 done"},
                    {"type": "Warning", "reason": "Slow", "message": "%s"}]}""".formatted("x".repeat(5000)),
        SyncResponse.UnknownFields.STRICT, new ArrayList<>());
    assertThat(response.events()).hasSize(2);
    assertThat(response.events().get(0)).isEqualTo(new HookEvent(false, "BackupTaken", "backup 7 done"));
    assertThat(response.events().get(1).warning()).isTrue();
    assertThat(response.events().get(1).message()).hasSize(HookEvent.MAX_MESSAGE).endsWith("...");
  }

  @Test
  void aBadEventIsRejectedNamingItsField() {
    for (String[] bad : new String[][] {
        {"{\"events\": {}}", "events must be a list"},
        {"{\"events\": [{\"type\": \"Error\", \"reason\": \"R\", \"message\": \"m\"}]}",
            "events[0].type must be Normal or Warning"},
        {"{\"events\": [{\"type\": \"Normal\", \"reason\": \"two words\", \"message\": \"m\"}]}",
            "events[0].reason must be a word"},
        {"{\"events\": [{\"type\": \"Normal\", \"reason\": \"R\"}]}", "events[0].message is required"},
        {"{\"events\": [{\"type\": \"Normal\", \"reason\": \"R\", \"message\": \"m\", \"count\": 2}]}",
            "events[0]: unknown field \"count\""}}) {
      assertThatThrownBy(() -> parse(bad[0], SyncResponse.UnknownFields.LOOSE, new ArrayList<>()))
          .isInstanceOf(HookResponseException.class).hasMessageContaining(bad[1]);
    }
  }

  @Test
  void emptyResponseMeansNothing() {
    SyncResponse response = parse("{}", SyncResponse.UnknownFields.STRICT, new ArrayList<>());
    assertThat(response.status()).isNull();
    assertThat(response.children()).isEmpty();
    assertThat(response.resyncAfter()).isNull();
    assertThat(response.finalized()).isFalse();
    assertThat(parse("{\"resyncAfterSeconds\": 0, \"status\": null, \"children\": null}",
        SyncResponse.UnknownFields.STRICT, new ArrayList<>()).resyncAfter()).isNull();
  }

  @Test
  void anAbsentOrNullChildrenFieldIsAnEmptyListThatSaysItWasNotGiven() {
    List<String> ignored = new ArrayList<>();
    SyncResponse.UnknownFields strict = SyncResponse.UnknownFields.STRICT;
    assertThat(parse("{\"status\": {}}", strict, ignored).childrenGiven()).isFalse();
    assertThat(parse("{\"children\": null}", strict, ignored).childrenGiven()).isFalse();
    assertThat(parse("{\"children\": null}", strict, ignored).children()).isEmpty();
    assertThat(parse("{\"children\": []}", strict, ignored).childrenGiven()).isTrue();
    assertThat(SyncResponse.parse(MAPPER.readTree("{\"outputs\": []}"), "outputs", strict, ignored::add)
        .childrenGiven()).isTrue();
    assertThat(new SyncResponse(null, List.of(), null, false, List.of()).childrenGiven())
        .as("an answer made in code gives its list").isTrue();
  }

  @Test
  void aResyncSoonerThanTheFloorIsRaisedToItAndLongerOnesAreKept() {
    SyncResponse.UnknownFields strict = SyncResponse.UnknownFields.STRICT;
    List<String> ignored = new ArrayList<>();
    assertThat(SyncResponse.MIN_RESYNC_AFTER).isEqualTo(Duration.ofMillis(100));
    for (String tiny : List.of("0.001", "1e-9", "1e-300", "0.0999")) {
      assertThat(parse("{\"resyncAfterSeconds\": " + tiny + "}", strict, ignored).resyncAfter()).as(tiny)
          .isEqualTo(SyncResponse.MIN_RESYNC_AFTER);
    }
    assertThat(parse("{\"resyncAfterSeconds\": 0.1}", strict, ignored).resyncAfter())
        .as("upstream's own tests ask for 0.1 s").isEqualTo(Duration.ofMillis(100));
    assertThat(parse("{\"resyncAfterSeconds\": 2.5}", strict, ignored).resyncAfter())
        .isEqualTo(Duration.ofMillis(2500));
    assertThat(parse("{\"resyncAfterSeconds\": -1}", strict, ignored).resyncAfter()).as("never").isNull();
  }

  /** Found by CompositeFuzzedAnswersTest: the parse of a 310-digit integer escaped as a JsonNodeException. */
  @Test
  void aResyncTooLargeForADoubleIsTheLongestDelayAndANegativeOneNone() {
    SyncResponse.UnknownFields strict = SyncResponse.UnknownFields.STRICT;
    List<String> ignored = new ArrayList<>();
    String huge = "1" + "0".repeat(309);
    assertThat(MAPPER.readTree(huge).isBigInteger()).as("as the hook client parses it").isTrue();
    for (String large : List.of(huge, "1e400", "1.5e308", String.valueOf(Long.MAX_VALUE))) {
      assertThat(parse("{\"resyncAfterSeconds\": " + large + "}", strict, ignored).resyncAfter()).as(large)
          .isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
    }
    assertThat(parse("{\"resyncAfterSeconds\": -" + huge + "}", strict, ignored).resyncAfter()).isNull();
    JsonNode decimal = MAPPER.createObjectNode().put("resyncAfterSeconds", new BigDecimal("-1e400"));
    assertThat(SyncResponse.parse(decimal, "children", strict, ignored::add).resyncAfter()).as("a big decimal")
        .isNull();
  }

  @Test
  void garbageIsRejectedWithTheField() {
    List<String> ignored = new ArrayList<>();
    SyncResponse.UnknownFields loose = SyncResponse.UnknownFields.LOOSE;
    assertThatThrownBy(() -> parse("[1]", loose, ignored)).hasMessageContaining("must be a JSON object");
    assertThatThrownBy(() -> parse("{\"status\": 5}", loose, ignored)).hasMessageContaining("status must be an object");
    assertThatThrownBy(() -> parse("{\"children\": {}}", loose, ignored))
        .hasMessageContaining("children must be a list");
    assertThatThrownBy(() -> parse("{\"children\": [null]}", loose, ignored))
        .hasMessageContaining("children[0] must be an object");
    assertThatThrownBy(() -> parse("{\"children\": [{\"apiVersion\": \"v1\", \"metadata\": {\"name\": \"x\"}}]}", loose,
        ignored))
        .hasMessageContaining("children[0].kind is required");
    assertThatThrownBy(() -> parse("{\"children\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {}}]}",
        loose, ignored))
        .hasMessageContaining("children[0].metadata.name is required");
    assertThatThrownBy(() -> parse("{\"children\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\":"
        + " {\"name\": \"p\", \"labels\": {\"a\": 1}}}]}", loose, ignored))
        .hasMessageContaining("children[0].metadata.labels.a must be a string");
    assertThatThrownBy(() -> parse("{\"resyncAfterSeconds\": \"soon\"}", loose, ignored))
        .hasMessageContaining("resyncAfterSeconds must be a number");
    assertThatThrownBy(() -> parse("{\"finalized\": \"yes\"}", loose, ignored))
        .hasMessageContaining("finalized must be true or false");
    assertThatThrownBy(() -> parse("{\"Status\": {}}", SyncResponse.UnknownFields.STRICT, ignored))
        .hasMessageContaining("unknown field \"Status\"");
  }

  @Test
  void objectKeysFollowTheHookVersion() {
    assertThat(ObjectMapKeys.groupKey("Pod", "v1")).isEqualTo("Pod.v1");
    assertThat(ObjectMapKeys.groupKey("Deployment", "apps/v1")).isEqualTo("Deployment.apps/v1");
    assertThat(ObjectMapKeys.objectKey(HookVersion.V1, true, "ns1", "web-0")).isEqualTo("web-0");
    assertThat(ObjectMapKeys.objectKey(HookVersion.V1, false, "ns1", "web-0")).isEqualTo("ns1/web-0");
    assertThat(ObjectMapKeys.objectKey(HookVersion.V1, false, "", "node-a")).isEqualTo("node-a");
    assertThat(ObjectMapKeys.objectKey(HookVersion.V2, true, "ns1", "web-0")).isEqualTo("ns1/web-0");
    assertThat(ObjectMapKeys.objectKey(HookVersion.V2, true, null, "node-a")).isEqualTo("node-a");
  }
}
