package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Every kind's status write ({@link StatusWriter}) against the recording API of the fakes tier, which checks a JSON
 * Patch's {@code test} as the API server does: the UID-guarded patch, and the one rule for 404, 409 and 422.
 */
class StatusWriterTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource WITHOUT_SUBRESOURCE =
      new ApiResource("test.metareactor.dev", "v1", "plainthings", "PlainThing", true, Set.of());

  private final RecordingApi api = new RecordingApi();
  private final StatusWriter writer = new StatusWriter(api);
  /** The object as the cache shows it: status {@code {ready: 1}}, UID {@code p-uid}. */
  private final KubeObject cached = object(THINGS, "team", "p").field("status", "{\"ready\": 1}").build();

  StatusWriterTest() {
    api.holding(THINGS, cached);
  }

  private boolean write(String status) {
    return write(THINGS, cached, status);
  }

  private boolean write(ApiResource resource, KubeObject object, String status) {
    Boolean written = writer.write(resource, object, object.toTree().get("status"), json(status))
        .block(Duration.ofSeconds(5));
    return Boolean.TRUE.equals(written);
  }

  private List<String> requests() {
    return api.actions().stream().map(RecordingApi.Action::toString).toList();
  }

  @Test
  void aStatusThatDiffersReplacesTheWholeStatusInOnePatchGuardedByTheUid() {
    assertThat(write("{\"ready\": 2}")).isTrue();

    assertThat(requests()).containsExactly("patch-status things team/p");
    assertThat(tree(api.actions().get(0).body())).isEqualTo(tree("""
        [{"op": "test", "path": "/metadata/uid", "value": "p-uid"},
         {"op": "add", "path": "/status", "value": {"ready": 2}}]"""));
  }

  @Test
  void withoutAStatusSubresourceTheObjectItselfIsPatched() {
    KubeObject plain = object(WITHOUT_SUBRESOURCE, "team", "p").build();
    api.holding(WITHOUT_SUBRESOURCE, plain);

    assertThat(write(WITHOUT_SUBRESOURCE, plain, "{\"ready\": 2}")).isTrue();

    assertThat(requests()).containsExactly("patch plainthings team/p");
    assertThat(tree(api.actions().get(0).body()).get(0))
        .isEqualTo(tree("{\"op\": \"test\", \"path\": \"/metadata/uid\", \"value\": \"p-uid\"}"));
  }

  @Test
  void aStatusEqualToTheCachedOneOrToTheOneJustWrittenIsNotWritten() {
    assertThat(write("{\"ready\": 1}")).isTrue();
    assertThat(requests()).as("the cached status").isEmpty();

    write("{\"ready\": 2}");
    assertThat(write("{\"ready\": 2}")).isTrue();
    assertThat(requests()).as("written once, while the cache does not show it yet").hasSize(1);
  }

  @Test
  void anObjectGoneAnswersFalseWithoutAFailure() {
    api.refusingNext("patch-status", 404, "NotFound");

    assertThat(write("{\"ready\": 2}")).isFalse();
    assertThat(requests()).containsExactly("patch-status things team/p");
  }

  @Test
  void aNamesakeCreatedSinceTheCacheShowedTheObjectIsNeverWrittenAndAnswersFalse() {
    api.holding(THINGS, object(THINGS, "team", "p").uid("p-uid-2").build());

    assertThat(write("{\"ready\": 2}")).isFalse();
    assertThat(requests()).as("the write, refused by its test of the UID (422), and one read that shows the namesake")
        .containsExactly("patch-status things team/p", "get things team/p");
  }

  @Test
  void anObjectGoneBetweenTheRefusalAndTheReadAnswersFalse() {
    api.refusingNext("patch-status", 422, "Invalid").refusingNext("get", 404, "NotFound");

    assertThat(write("{\"ready\": 2}")).isFalse();
  }

  @Test
  void aStatusTheApiServerRefusesForTheSameObjectIsBadInputNamingTheServersMessage() {
    api.refusingNext("patch-status", 422, "Invalid");

    assertThatThrownBy(() -> write("{\"ready\": \"many\"}"))
        .isInstanceOf(StatusWriter.RefusedStatusException.class)
        .hasMessage("can't update status: patch-status refused: 422 Invalid");
    assertThat(requests()).containsExactly("patch-status things team/p", "get things team/p");
  }

  @Test
  void aConflictPassesAsItIsSoThatTheSyncRunsAgainWithoutAnEvent() {
    api.refusingNext("patch-status", 409, "Conflict");

    assertThatThrownBy(() -> write("{\"ready\": 2}"))
        .isInstanceOfSatisfying(ApiException.class, conflict -> assertThat(conflict.code()).isEqualTo(409))
        .satisfies(conflict -> assertThat(WriteConflicts.only(conflict)).isTrue());
  }

  @Test
  void anyOtherFailureAndAFailedReadAfterA422FailTheWriteNamingTheStatus() {
    api.refusingNext("patch-status", 500, "InternalError");
    assertThatThrownBy(() -> write("{\"ready\": 2}"))
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessage("can't update status: patch-status refused: 500 InternalError");

    api.refusingNext("patch-status", 422, "Invalid").refusingNext("get", 503, "ServiceUnavailable");
    assertThatThrownBy(() -> write("{\"ready\": 2}"))
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessage("can't update status: patch-status refused: 422 Invalid");
  }

  @Test
  void aFailedWriteIsNotRememberedAsWritten() {
    api.refusingNext("patch-status", 500, "InternalError");
    assertThatThrownBy(() -> write("{\"ready\": 2}")).isInstanceOf(IllegalStateException.class);

    assertThat(write("{\"ready\": 2}")).isTrue();
    assertThat(requests()).containsExactly("patch-status things team/p", "patch-status things team/p");
  }

  private static ObjectNode json(String text) {
    return (ObjectNode) KubeJson.mapper().readTree(text);
  }

  private static JsonNode tree(String text) {
    return KubeJson.mapper().readTree(text);
  }
}
