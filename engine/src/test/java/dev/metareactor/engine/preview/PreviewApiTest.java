package dev.metareactor.engine.preview;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.preview.PlannedWrite.Verb;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** How a preview names a write and shows its change, from the object before and the dry run's answer. */
class PreviewApiTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true,
      Set.of());
  private static final ApiResource REVISIONS = new ApiResource("metacontroller.k8s.io", "v1alpha1",
      "controllerrevisions", "ControllerRevision", true, Set.of());

  private static ObjectNode object(String json) {
    return (ObjectNode) KubeJson.mapper().readTree(json);
  }

  @Test
  void theMergeDiffHoldsWhatChangedNullsWhatWentAndReplacesArraysWhole() {
    ObjectNode before = object("{\"a\": 1, \"b\": {\"c\": 1, \"d\": 2}, \"e\": [1, 2], \"gone\": true}");
    ObjectNode after = object("{\"a\": 1, \"b\": {\"c\": 3, \"d\": 2}, \"e\": [1], \"new\": \"x\"}");

    assertThat(MergeDiff.of(before, after)).isEqualTo(object(
        "{\"gone\": null, \"b\": {\"c\": 3}, \"e\": [1], \"new\": \"x\"}"));
    assertThat(MergeDiff.of(after, after.deepCopy()).isEmpty()).isTrue();
  }

  @Test
  void whatTheApiServerMaintainsIsNoChange() {
    ObjectNode before = object("{\"metadata\": {\"name\": \"a\", \"resourceVersion\": \"1\", \"generation\": 1,"
        + " \"managedFields\": [{}]}, \"data\": {\"k\": \"v\"}}");
    ObjectNode after = object("{\"metadata\": {\"name\": \"a\", \"resourceVersion\": \"2\", \"generation\": 2,"
        + " \"managedFields\": [{}, {}]}, \"data\": {\"k\": \"v\"}}");

    PlannedWrite write = PreviewApi.planned(null, 1, Verb.UPDATE, CONFIG_MAPS, "default", "a", before, after);

    assertThat(write.verb()).isEqualTo(Verb.UPDATE);
    assertThat(write.changes()).as("only the server's own fields moved").isFalse();
  }

  @Test
  void aCreateShowsTheObjectWithoutWhatTheServerMadeUp() {
    ObjectNode answer = object("{\"metadata\": {\"name\": \"a\", \"uid\": \"u\", \"creationTimestamp\": \"t\","
        + " \"resourceVersion\": \"1\"}, \"data\": {\"k\": \"v\"}}");

    PlannedWrite write = PreviewApi.planned(null, 1, Verb.CREATE, CONFIG_MAPS, "default", "a", null, answer);

    assertThat(write.verb()).isEqualTo(Verb.CREATE);
    assertThat(write.changes()).isTrue();
    assertThat(write.diff()).isEqualTo(object("{\"metadata\": {\"name\": \"a\"}, \"data\": {\"k\": \"v\"}}"));
  }

  @Test
  void aChangeOfTheControllerRefAloneIsAnAdoptionOrARelease() {
    ObjectNode free = object("{\"metadata\": {\"name\": \"a\"}, \"data\": {\"k\": \"v\"}}");
    ObjectNode owned = object("{\"metadata\": {\"name\": \"a\", \"ownerReferences\": [{\"apiVersion\": \"v1\","
        + " \"kind\": \"Site\", \"name\": \"parent\", \"uid\": \"p\", \"controller\": true}]},"
        + " \"data\": {\"k\": \"v\"}}");
    ObjectNode ownedAndChanged = owned.deepCopy();
    ownedAndChanged.putObject("data").put("k", "w");

    assertThat(PreviewApi.planned(null, 1, Verb.UPDATE, CONFIG_MAPS, "default", "a", free, owned).verb())
        .isEqualTo(Verb.ADOPT);
    assertThat(PreviewApi.planned(null, 1, Verb.UPDATE, CONFIG_MAPS, "default", "a", owned, free).verb())
        .isEqualTo(Verb.RELEASE);
    assertThat(PreviewApi.planned(null, 1, Verb.UPDATE, CONFIG_MAPS, "default", "a", free, ownedAndChanged)
        .verb()).as("adopted and changed at once: an update").isEqualTo(Verb.UPDATE);
  }

  @Test
  void aControllerRevisionsWriteIsARevision() {
    ObjectNode revision = object("{\"metadata\": {\"name\": \"r\"}, \"children\": []}");

    assertThat(PreviewApi.planned(null, 1, Verb.CREATE, REVISIONS, "default", "r", null, revision).verb())
        .isEqualTo(Verb.REVISION);
  }

  @Test
  void theUnifiedDiffShowsChangedLinesWithTheirContextAndSkipsTheRest() {
    List<String> before = IntStream.rangeClosed(1, 15).mapToObj(i -> "l" + i).toList();
    List<String> after = before.stream().map(line -> line.equals("l3") || line.equals("l15") ? line + "x" : line)
        .toList();

    assertThat(PreviewReport.unifiedDiff(before, after, false)).isEqualTo(String.join("\n",
        "      l1", "      l2", "    - l3", "    + l3x", "      l4", "      l5", "      l6", "    @@",
        "      l12", "      l13", "      l14", "    - l15", "    + l15x", ""));
  }
}
