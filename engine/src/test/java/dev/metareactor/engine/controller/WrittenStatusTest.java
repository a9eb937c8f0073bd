package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** A status written is not written again while the cache shows the object as it was before that write. */
class WrittenStatusTest {

  private final WrittenStatus written = new WrittenStatus();

  @Test
  void aStatusEqualToTheCachedOneNeedsNoWrite() {
    KubeObject parent = parent("10", "{\"ready\": 1}");
    assertThat(written.needsWriting(parent, statusOf(parent), json("{\"ready\": 1}"))).isFalse();
    assertThat(written.needsWriting(parent, statusOf(parent), json("{\"ready\": 2}"))).isTrue();
  }

  @Test
  void theSameStatusIsNotWrittenAgainWhileTheCacheLagsBehindTheWrite() {
    KubeObject before = parent("10", "{\"ready\": 1}");
    written.wrote(before, answer(parent("11", "{\"ready\": 2}")), json("{\"ready\": 2}"));

    assertThat(written.needsWriting(before, statusOf(before), json("{\"ready\": 2}"))).isFalse();
    assertThat(written.needsWriting(before, statusOf(before), json("{\"ready\": 3}"))).isTrue();
  }

  @Test
  void theSameStatusWithItsKeysInAnotherOrderIsTheOneWritten() {
    KubeObject before = parent("10", "{\"ready\": 1}");
    written.wrote(before, answer(parent("11", "{\"ready\": 2, \"phase\": \"Up\"}")),
        json("{\"ready\": 2, \"phase\": \"Up\", \"nested\": {\"b\": [1, \"x\"], \"a\": true}}"));

    assertThat(written.needsWriting(before, statusOf(before),
        json("{\"nested\": {\"a\": true, \"b\": [1, \"x\"]}, \"phase\": \"Up\", \"ready\": 2}"))).isFalse();
    assertThat(written.needsWriting(before, statusOf(before),
        json("{\"nested\": {\"a\": true, \"b\": [\"x\", 1]}, \"phase\": \"Up\", \"ready\": 2}"))).isTrue();
  }

  @Test
  void onceTheCacheMovesOnItDecidesAgain() {
    KubeObject before = parent("10", "{\"ready\": 1}");
    written.wrote(before, answer(parent("11", "{\"ready\": 2}")), json("{\"ready\": 2}"));
    // Somebody else wrote a status after ours: the cache shows theirs, and ours is put back.
    KubeObject theirs = parent("12", "{\"ready\": 7}");

    assertThat(written.needsWriting(theirs, statusOf(theirs), json("{\"ready\": 2}"))).isTrue();
  }

  @Test
  void aVersionBetweenTheOneWrittenOverAndTheWritesOwnDoesNotShowTheWriteEither() {
    // A DecoratorController patches the target's labels (version 11), then its status (12): the labels' event
    // shows 11, whose status is still the old one.
    KubeObject before = parent("10", "{\"ready\": 1}");
    written.wrote(before, answer(parent("12", "{\"ready\": 2}")), json("{\"ready\": 2}"));
    KubeObject labelled = parent("11", "{\"ready\": 1}");

    assertThat(written.needsWriting(labelled, statusOf(labelled), json("{\"ready\": 2}"))).isFalse();
    assertThat(written.needsWriting(labelled, statusOf(labelled), json("{\"ready\": 3}"))).isTrue();
    KubeObject theirs = parent("13", "{\"ready\": 7}");
    assertThat(written.needsWriting(theirs, statusOf(theirs), json("{\"ready\": 2}"))).isTrue();
  }

  @Test
  void withoutTheWritesVersionOnlyTheVersionWrittenOverCounts() {
    KubeObject before = parent("10", "{\"ready\": 1}");
    written.wrote(before, new ObjectApi.Written(new byte[0]), json("{\"ready\": 2}"));
    KubeObject labelled = parent("11", "{\"ready\": 1}");

    assertThat(written.needsWriting(before, statusOf(before), json("{\"ready\": 2}"))).isFalse();
    assertThat(written.needsWriting(labelled, statusOf(labelled), json("{\"ready\": 2}"))).isTrue();
  }

  private static ObjectApi.Written answer(KubeObject object) {
    return new ObjectApi.Written(KubeJson.bytes(object.toTree()));
  }

  private static KubeObject parent(String resourceVersion, String status) {
    return KubeObject.of((ObjectNode) json("{\"apiVersion\": \"v1\", \"kind\": \"Thing\", \"metadata\": {\"name\":"
        + " \"p\", \"uid\": \"u1\", \"resourceVersion\": \"" + resourceVersion + "\"}, \"status\": " + status + "}"));
  }

  private static JsonNode statusOf(KubeObject object) {
    return object.toTree().get("status");
  }

  private static JsonNode json(String text) {
    return KubeJson.mapper().readTree(text);
  }
}
