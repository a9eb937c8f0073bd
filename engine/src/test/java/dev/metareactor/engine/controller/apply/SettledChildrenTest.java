package dev.metareactor.engine.controller.apply;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** A verdict holds for the child at the resourceVersion it was made at and for the same desired state only. */
class SettledChildrenTest {

  private final SettledChildren settled = new SettledChildren();

  @Test
  void aVerdictHoldsAtItsVersionForItsDesiredState() {
    settled.settle(child("u1", "120"), 7);

    assertThat(settled.isSettled(child("u1", "120"), 7)).isTrue();
    assertThat(settled.isSettled(child("u1", "121"), 7)).isFalse();
    assertThat(settled.isSettled(child("u1", "120"), 8)).isFalse();
    assertThat(settled.isSettled(child("u2", "120"), 7)).isFalse();
  }

  @Test
  void aVersionThatIsNoIntegerIsComparedAsText() {
    settled.settle(child("u1", "v-120"), 7);
    settled.settle(child("u2", "007"), 7);

    assertThat(settled.isSettled(child("u1", "v-120"), 7)).isTrue();
    assertThat(settled.isSettled(child("u1", "v-121"), 7)).isFalse();
    assertThat(settled.isSettled(child("u2", "007"), 7)).isTrue();
    assertThat(settled.isSettled(child("u2", "7"), 7)).isFalse();
  }

  @Test
  void aChildWithoutAVersionIsNeverSettled() {
    settled.settle(child("u1", null), 7);

    assertThat(settled.isSettled(child("u1", null), 7)).isFalse();
  }

  private static KubeObject child(String uid, String resourceVersion) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\","
        + " \"metadata\": {\"name\": \"c\", \"namespace\": \"ns\", \"uid\": \"" + uid + "\""
        + (resourceVersion == null ? "" : ", \"resourceVersion\": \"" + resourceVersion + "\"") + "}}"));
  }
}
