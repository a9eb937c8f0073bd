package dev.metareactor.engine.controller.rolling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.StatusCheck;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.kube.KubeJson;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

class RolloutTest {

  private static final ClaimedChild A = pod("a");
  private static final ClaimedChild B = pod("b");
  private static final ClaimedChild C = pod("c");
  private static final ClaimedChild SERVICE = new ClaimedChild("", "Service", "web");
  private static final StatusCheck READY = new StatusCheck("Ready", "True", null);

  private final Rollout rollout = new Rollout(
      List.of(new Rollout.Rule("", "Pod", UpdateMethod.ROLLING_IN_PLACE, List.of(READY))));
  private final Map<ClaimedChild, JsonNode> observed = new HashMap<>();
  /** "Up to date" for these tests: the observed child has the desired data. */
  private final Rollout.UpdateCheck sameData = (child, desired) -> observed.get(child).get("data").equals(
      desired.get("data"));

  private static ClaimedChild pod(String name) {
    return new ClaimedChild("", "Pod", name);
  }

  private static ObjectNode child(String version) {
    return (ObjectNode) KubeJson.mapper().readTree("{\"data\":{\"version\":\"" + version + "\"}}");
  }

  private static ObjectNode ready(String version) {
    ObjectNode child = child(version);
    child.putObject("status").putArray("conditions").addObject().put("type", "Ready").put("status", "True");
    return child;
  }

  private static Map<ClaimedChild, JsonNode> answer(String version, ClaimedChild... children) {
    Map<ClaimedChild, JsonNode> desired = new LinkedHashMap<>();
    for (ClaimedChild each : children) {
      desired.put(each, child(version));
    }
    return desired;
  }

  private static Rollout.Revision revision(String name, List<ClaimedChild> claims,
      Map<ClaimedChild, JsonNode> desired) {
    return new Rollout.Revision(name, new RevisionClaims(claims), desired);
  }

  private Rollout.Result step(Rollout.Revision latest, Rollout.Revision... older) {
    return rollout.step(latest, List.of(older), observed::get, sameData);
  }

  @Test
  void aNewRevisionTakesOneChildAtATimeInTheAnswersOrder() {
    List.of(A, B, C).forEach(pod -> observed.put(pod, ready("v1")));
    Rollout.Revision old = revision("old", List.of(A, B, C), answer("v1", A, B, C));

    Rollout.Result first = step(revision("new", List.of(), answer("v2", A, B, C)), old);

    assertThat(first.latest().children()).containsExactly(A);
    assertThat(first.older()).containsOnlyKeys("old");
    assertThat(first.older().get("old").children()).containsExactly(B, C);
    assertThat(first.updated()).isEqualTo(new Rollout.Condition("False", "RolloutProgressing", "updating Pod a"));
    assertThat(first.desiredChildren()).containsExactly(Map.entry(A, child("v2")), Map.entry(B, child("v1")),
        Map.entry(C, child("v1")));
  }

  @Test
  void theNextChildWaitsUntilEveryChildOnLatestIsUpdatedAndReady() {
    Rollout.Revision old = revision("old", List.of(B, C), answer("v1", A, B, C));
    Rollout.Revision latest = revision("new", List.of(A), answer("v2", A, B, C));
    observed.put(B, ready("v1"));
    observed.put(C, ready("v1"));

    assertThat(step(latest, old).updated().message()).isEqualTo("missing child Pod a");

    observed.put(A, ready("v1"));
    assertThat(step(latest, old).updated().message()).isEqualTo("child Pod a is not updated yet");

    observed.put(A, child("v2"));
    Rollout.Result waiting = step(latest, old);
    assertThat(waiting.updated()).isEqualTo(new Rollout.Condition("False", "RolloutWaiting",
        "child Pod a failed status check: required condition type missing: \"Ready\""));
    assertThat(waiting.latest().children()).containsExactly(A);
    assertThat(waiting.older().get("old").children()).containsExactly(B, C);

    observed.put(A, ready("v2"));
    Rollout.Result next = step(latest, old);
    assertThat(next.updated().message()).isEqualTo("updating Pod b");
    assertThat(next.latest().children()).containsExactly(A, B);
    assertThat(next.older().get("old").children()).containsExactly(C);
  }

  @Test
  void rollingInPlaceWaitsForAChildToObserveItsGenerationWhenItReportsOne() {
    ObjectNode stale = ready("v2");
    stale.putObject("metadata").put("generation", 3);
    ((ObjectNode) stale.get("status")).put("observedGeneration", 2);
    observed.put(A, stale);
    observed.put(B, ready("v1"));
    Rollout.Revision old = revision("old", List.of(B), answer("v1", A, B));
    Rollout.Revision latest = revision("new", List.of(A), answer("v2", A, B));

    assertThat(step(latest, old).updated().message())
        .isEqualTo("child Pod a with RollingInPlace update strategy hasn't observed latest spec");

    ((ObjectNode) stale.get("status")).put("observedGeneration", 3);
    assertThat(step(latest, old).updated().message()).isEqualTo("updating Pod b");
  }

  @Test
  void whenEveryChildIsOnLatestTheOldRevisionsAreLetGo() {
    List.of(A, B).forEach(pod -> observed.put(pod, ready("v2")));
    Rollout.Revision old = revision("old", List.of(), answer("v1", A, B));

    Rollout.Result done = step(revision("new", List.of(A, B), answer("v2", A, B)), old);

    assertThat(done.older()).isEmpty();
    assertThat(done.updated()).isEqualTo(new Rollout.Condition("True", "OnLatestRevision",
        "latest ControllerRevision: new"));
    assertThat(done.desiredChildren()).containsExactly(Map.entry(A, child("v2")), Map.entry(B, child("v2")));
  }

  @Test
  void aChildNobodyClaimsIsLatestsAtOnceAndOneAlreadyAsLatestWantsMovesWithoutWaiting() {
    observed.put(A, child("v1")); // not ready: would block a gated move
    observed.put(B, ready("v2")); // already what latest wants
    Rollout.Revision old = revision("old", List.of(A, B), answer("v1", A, B));

    Rollout.Result result = step(revision("new", List.of(), answer("v2", A, B, C)), old);

    // C is new (no revision claims it) and B needs no write: both move to latest at once, ungated. A, the one
    // child left on "old", must then wait: C, now on latest, does not exist yet.
    assertThat(result.updated().message()).isEqualTo("missing child Pod c");
    assertThat(result.latest().children()).containsExactly(B, C);
    assertThat(result.older().get("old").children()).containsExactly(A);
    assertThat(result.desiredChildren().get(A)).isEqualTo(child("v1"));
    assertThat(result.desiredChildren().get(C)).isEqualTo(child("v2"));
  }

  @Test
  void claimsAreCleanedBeforeAnythingMoves() {
    List.of(A, B).forEach(pod -> observed.put(pod, ready("v1")));
    // "old" claims A (also claimed by latest), B, a Service (not rolling) and C (no longer desired by latest);
    // "older" claims B again.
    Rollout.Revision old = revision("old", List.of(A, B, SERVICE, C), answer("v1", A, B, C));
    Rollout.Revision older = revision("older", List.of(B), answer("v0", B));
    Map<ClaimedChild, JsonNode> wanted = answer("v2", A, B);
    wanted.put(SERVICE, child("v2"));

    Rollout.Result result = step(revision("new", List.of(A), wanted), old, older);

    // A is latest's (not ready yet at v2, so B waits); B stays with "old"; "older" has nothing left and goes.
    assertThat(result.latest().children()).containsExactly(A);
    assertThat(result.older()).containsOnlyKeys("old");
    assertThat(result.older().get("old").children()).containsExactly(B);
    assertThat(result.updated().message()).isEqualTo("child Pod a is not updated yet");
    assertThat(result.desiredChildren()).containsOnlyKeys(A, B, SERVICE);
    assertThat(result.desiredChildren().get(SERVICE)).isEqualTo(child("v2"));
    assertThat(result.desiredChildren().get(B)).isEqualTo(child("v1"));
  }

  @Test
  void anUpdateCheckThatCannotTellStopsTheRolloutWithItsReason() {
    Rollout failing = new Rollout(List.of(new Rollout.Rule("", "Pod", UpdateMethod.ROLLING_RECREATE, List.of())));
    observed.put(A, ready("v2"));
    observed.put(B, ready("v1"));

    Rollout.Result result = failing.step(revision("new", List.of(A), answer("v2", A, B)),
        List.of(revision("old", List.of(B), answer("v1", A, B))), observed::get, (child, desired) -> {
          throw new IllegalStateException("a list changed its merge key");
        });

    assertThat(result.updated().message())
        .isEqualTo("can't check if child Pod a is updated: a list changed its merge key");
    assertThat(result.latest().children()).containsExactly(A);
  }

  @Test
  void onlyRollingMethodsMakeRules() {
    assertThatThrownBy(() -> new Rollout.Rule("apps", "Deployment", UpdateMethod.IN_PLACE, List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Deployment.apps: InPlace is not a rolling method");
  }

  @Test
  void theConditionReplacesItsTypeAndKeepsTheOthers() {
    JsonNode status = KubeJson.mapper().readTree("{\"replicas\":3,\"conditions\":[{\"type\":\"Ready\","
        + "\"status\":\"True\"},{\"type\":\"Updated\",\"status\":\"False\",\"reason\":\"RolloutWaiting\"}]}");

    ObjectNode updated = Rollout.Condition.onLatest("r1").applyTo(status);

    assertThat(updated.toString()).isEqualTo("{\"replicas\":3,\"conditions\":[{\"type\":\"Ready\",\"status\":"
        + "\"True\"},{\"type\":\"Updated\",\"status\":\"True\",\"reason\":\"OnLatestRevision\",\"message\":"
        + "\"latest ControllerRevision: r1\"}]}");
    assertThat(Rollout.Condition.waiting("why").applyTo(null).toString()).isEqualTo(
        "{\"conditions\":[{\"type\":\"Updated\",\"status\":\"False\",\"reason\":\"RolloutWaiting\",\"message\":"
            + "\"why\"}]}");
    assertThatThrownBy(() -> Rollout.Condition.waiting("why").applyTo(KubeJson.mapper().readTree(
        "{\"conditions\":{}}"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the sync hook's status.conditions is not a list");
  }
}
