package dev.metareactor.engine.controller.rolling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.kube.KubeJson;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

class RevisionPatchTest {

  private static JsonNode json(String text) {
    return KubeJson.mapper().readTree(text.replace('\'', '"'));
  }

  private static final JsonNode PARENT = json("{'apiVersion':'ctl.example.com/v1','kind':'CatSet',"
      + "'metadata':{'name':'web','uid':'u-1','labels':{'app':'web'}},"
      + "'spec':{'replicas':3,'template':{'metadata':{'labels':{'app':'web'}},'spec':{'image':'nginx:1'}}},"
      + "'status':{'ready':2}}");

  @Test
  void theDefaultRecordsTheWholeSpec() {
    RevisionPatch patch = RevisionPatch.of(PARENT, List.of());

    assertThat(patch.fieldPaths()).containsExactly("spec");
    assertThat(patch.fields()).isEqualTo(json("{'spec':" + PARENT.get("spec") + "}"));
  }

  @Test
  void nestedPathsRecordOnlyTheirValuesAtTheirPlaces() {
    RevisionPatch patch = RevisionPatch.of(PARENT, List.of("spec.template", "metadata.labels"));

    assertThat(patch.fields()).isEqualTo(json("{'spec':{'template':" + PARENT.at("/spec/template") + "},"
        + "'metadata':{'labels':{'app':'web'}}}"));
  }

  @Test
  void aMissingPathOrANullOnTheWayIsLeftOut() {
    JsonNode parent = json("{'spec':{'template':null,'replicas':null}}");

    RevisionPatch patch = RevisionPatch.of(parent, List.of("spec.template.spec", "spec.selector", "spec.replicas"));

    // A null on the way is "not found"; a null at the end is a value, recorded as null.
    assertThat(patch.fields()).isEqualTo(json("{'spec':{'replicas':null}}"));
  }

  @Test
  void aPathThroughAValueThatIsNotAnObjectIsAnErrorNamingIt() {
    assertThatThrownBy(() -> RevisionPatch.of(PARENT, List.of("spec.replicas.count")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("field path spec.replicas.count: spec.replicas is a number, not an object");
  }

  @Test
  void theRecordedFieldsAreACopy() {
    ObjectNode parent = (ObjectNode) PARENT.deepCopy();
    RevisionPatch patch = RevisionPatch.of(parent, List.of("spec"));

    ((ObjectNode) parent.get("spec")).put("replicas", 9);

    assertThat(patch.fields().at("/spec/replicas").intValue()).isEqualTo(3);
  }

  @Test
  void applyingAnOldPatchGivesTheParentAsThatRevisionSawIt() {
    RevisionPatch old = RevisionPatch.of(PARENT, List.of("spec.template"));
    ObjectNode current = (ObjectNode) PARENT.deepCopy();
    ((ObjectNode) current.at("/spec/template/spec")).put("image", "nginx:2");
    ((ObjectNode) current.get("spec")).put("replicas", 5);

    ObjectNode materialised = old.applyTo(current);

    // The recorded path is the old one; everything else is the current parent's.
    assertThat(materialised.at("/spec/template/spec/image").stringValue()).isEqualTo("nginx:1");
    assertThat(materialised.at("/spec/replicas").intValue()).isEqualTo(5);
    assertThat(materialised.get("status")).isEqualTo(PARENT.get("status"));
    assertThat(current.at("/spec/template/spec/image").stringValue()).isEqualTo("nginx:2");
  }

  @Test
  void applyingCreatesObjectsOnTheWayAndReplacesANullButNotAnotherValue() {
    RevisionPatch patch = RevisionPatch.of(PARENT, List.of("spec.template.spec"));

    assertThat(patch.applyTo(json("{'metadata':{'name':'web'}}")).at("/spec/template/spec/image").stringValue())
        .isEqualTo("nginx:1");
    assertThat(patch.applyTo(json("{'spec':{'template':null}}")).at("/spec/template/spec/image").stringValue())
        .isEqualTo("nginx:1");
    assertThatThrownBy(() -> patch.applyTo(json("{'spec':{'template':'oops'}}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("field path spec.template.spec: spec.template is a string, not an object, so the value cannot be"
            + " set");
  }

  @Test
  void aPatchReadBackFromARevisionIsTheSameAsTheParentsWhateverTheNumbersLookLike() {
    RevisionPatch latest = RevisionPatch.of(PARENT, List.of("spec"));
    RevisionPatch recorded = RevisionPatch.recorded(json(new String(latest.goJson(), StandardCharsets.UTF_8)
        .replace("\"replicas\":3", "\"replicas\":3.0")), List.of("spec"));

    assertThat(recorded.sameAs(latest)).isTrue();
    assertThat(RevisionPatch.of(json("{'spec':{'replicas':4}}"), List.of()).sameAs(latest)).isFalse();
    assertThatThrownBy(() -> RevisionPatch.recorded(json("[1]"), List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("parentPatch is not a JSON object");
  }

  @Test
  void thePatchIsWrittenAsGoWritesIt() {
    RevisionPatch patch = RevisionPatch.of(json("{'spec':{'replicas':3.0,'note':'<a&b>','a':1}}"), List.of());

    assertThat(new String(patch.goJson(), StandardCharsets.UTF_8))
        .isEqualTo("{\"spec\":{\"a\":1,\"note\":\"\\u003ca\\u0026b\\u003e\",\"replicas\":3}}");
  }
}
