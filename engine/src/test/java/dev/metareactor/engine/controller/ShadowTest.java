package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.testing.FakeInformerLease;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** What a shadow's answer is compared on, and how its first difference reads. */
class ShadowTest {

  private static final HookCaller.RootObject ROOT = new HookCaller.RootObject("Site", "ns", "site");
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ChildType TYPE = new ChildType(CONFIG_MAPS, new FakeInformerLease(CONFIG_MAPS),
      UpdateMethod.IN_PLACE);

  private static HookCall.Reply reply(String json) {
    JsonNode body = KubeJson.mapper().readTree(json);
    return new HookCall.Reply(SyncResponse.parse(body, "children", Set.of("labels"), SyncResponse.UnknownFields.LOOSE,
        field -> { }), body);
  }

  /** The check a plain sync runs: every child kept as answered, nothing written. */
  private static final Plan.Check KEEP = (response, body) -> new Answer(response.children().stream()
      .map(child -> new DesiredChild(TYPE, child)).toList(), Set.of(), () -> Mono.just(true));

  private static String difference(String real, String shadow, Plan.Check check) {
    HookCall.Reply realReply = reply(real);
    Answer.Checked checked = new Answer.Checked(realReply.response(),
        check == null ? KEEP.check(realReply.response(), realReply.body())
            : check.check(realReply.response(), realReply.body()));
    return Shadow.difference(List.of(new Shadow.Exchange(KubeJson.nodes().objectNode(), ROOT, realReply)),
        List.of(reply(shadow)), check, checked, Set.of("labels"));
  }

  private static final String CHILD = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\","
      + " \"metadata\": {\"name\": \"a\", \"namespace\": \"ns\"}, \"data\": {\"value\": \"%s\"}}";

  @Test
  void answersThatAskForTheSameAreTheSameWhateverTheirOrder() {
    String two = "{\"children\": [" + CHILD.formatted("x") + ", " + CHILD.replace("\"a\"", "\"b\"").formatted("y")
        + "], \"status\": {\"n\": 2}}";
    String reversed = "{\"status\": {\"n\": 2}, \"children\": [" + CHILD.replace("\"a\"", "\"b\"").formatted("y")
        + ", " + CHILD.formatted("x") + "]}";

    assertThat(difference(two, reversed, KEEP)).isEmpty();
  }

  @Test
  void theFirstDifferenceNamesTheObjectAndTheField() {
    assertThat(difference("{\"children\": [" + CHILD.formatted("x") + "]}",
        "{\"children\": [" + CHILD.formatted("y") + "]}", KEEP))
        .isEqualTo("v1 ConfigMap ns/a .data.value: \"x\" (real) vs \"y\" (shadow)");
    assertThat(difference("{\"children\": [" + CHILD.formatted("x") + "]}", "{\"children\": []}", KEEP))
        .isEqualTo("v1 ConfigMap ns/a: in the real answer, not in the shadow one");
    assertThat(difference("{\"children\": [], \"status\": {\"n\": 1}}", "{\"children\": [], \"status\": {\"n\": 2}}",
        KEEP)).isEqualTo("status .n: 1 (real) vs 2 (shadow)");
    assertThat(difference("{\"children\": [], \"labels\": {\"a\": \"1\"}}", "{\"children\": []}", KEEP))
        .isEqualTo("labels: {\"a\":\"1\"} (real) vs none (shadow)");
    assertThat(difference("{\"children\": [], \"resyncAfterSeconds\": 5}", "{\"children\": []}", KEEP))
        .startsWith("resyncAfterSeconds: PT5S (real) vs null (shadow)");
  }

  @Test
  void aShadowAnswerTheChecksRefuseIsAnError() {
    Plan.Check refusesY = (response, body) -> {
      if (body.toString().contains("\"y\"")) {
        throw new HookResponseException("children[0]: y is not allowed");
      }
      return KEEP.check(response, body);
    };

    assertThatThrownBy(() -> difference("{\"children\": [" + CHILD.formatted("x") + "]}",
        "{\"children\": [" + CHILD.formatted("y") + "]}", refusesY)).isInstanceOf(HookResponseException.class)
        .hasMessageContaining("y is not allowed");
  }

  @Test
  void withoutAPlainCheckAnswersAreComparedAsTheHooksGaveThem() {
    assertThat(difference("{\"children\": [" + CHILD.formatted("x") + "]}",
        "{\"children\": [" + CHILD.formatted("y") + "]}", null))
        .isEqualTo("v1 ConfigMap ns/a .data.value: \"x\" (real) vs \"y\" (shadow)");
  }
}
