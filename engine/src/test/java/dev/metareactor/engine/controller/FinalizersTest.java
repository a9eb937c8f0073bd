package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** {@link Finalizers}: the writes that add and remove our finalizer never drop anyone else's. */
class FinalizersTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final String OURS = "metacontroller.io/compositecontroller-things";

  private final RecordingApi api = new RecordingApi();
  private final Finalizers finalizers = new Finalizers(OURS, api);

  private static KubeObject thing(String finalizers, String deletionTimestamp) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "p", "namespace": "team", "uid": "u", "resourceVersion": "42",
                      "finalizers": %s %s}}"""
        .formatted(finalizers, deletionTimestamp == null ? "" : ", \"deletionTimestamp\": \"" + deletionTimestamp
            + "\"")));
  }

  @Test
  void addingKeepsTheOthersAndCarriesTheResourceVersion() {
    KubeObject thing = thing("[\"someone.else/x\"]", null);
    api.holding(THINGS, thing);
    finalizers.add(THINGS, thing).block(Duration.ofSeconds(5));

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("patch things team/p");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(0).body());
    assertThat(patch.path("metadata").path("finalizers").toString()).isEqualTo("[\"someone.else/x\",\"" + OURS + "\"]");
    assertThat(patch.path("metadata").path("resourceVersion").asString()).isEqualTo("42");
  }

  @Test
  void presentOrAbsentAsWantedMeansNoRequest() {
    finalizers.add(THINGS, thing("[\"" + OURS + "\"]", null)).block(Duration.ofSeconds(5));
    finalizers.remove(THINGS, thing("[\"someone.else/x\"]", null)).block(Duration.ofSeconds(5));

    assertThat(api.actions()).isEmpty();
  }

  @Test
  void removingTestsOurNameAtItsIndexAndRemovesOnlyThat() {
    KubeObject thing = thing("[\"someone.else/x\", \"" + OURS + "\"]", null);
    api.holding(THINGS, thing);
    finalizers.remove(THINGS, thing).block(Duration.ofSeconds(5));

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("patch things team/p");
    assertThat(KubeJson.mapper().readTree(api.actions().get(0).body()).toString()).isEqualTo(
        "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/1\",\"value\":\"" + OURS + "\"},"
            + "{\"op\":\"remove\",\"path\":\"/metadata/finalizers/1\"}]");
  }

  @Test
  void childrenOfADeletedObjectAreManagedOnlyWhileOurFinalizerHoldsItAndTheCollectorIsNotAtWork() {
    String deleted = "2026-11-23T10:00:00Z";
    assertThat(finalizers.mayManageChildrenWhileDeleting(thing("[\"" + OURS + "\"]", deleted))).isTrue();
    assertThat(finalizers.mayManageChildrenWhileDeleting(thing("[]", deleted))).isFalse();
    assertThat(finalizers.mayManageChildrenWhileDeleting(thing("[\"" + OURS + "\", \"foregroundDeletion\"]",
        deleted))).isFalse();
    assertThat(finalizers.mayManageChildrenWhileDeleting(thing("[\"orphan\", \"" + OURS + "\"]", deleted)))
        .isFalse();
  }
}
