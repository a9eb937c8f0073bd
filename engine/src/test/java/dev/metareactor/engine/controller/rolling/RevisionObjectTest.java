package dev.metareactor.engine.controller.rolling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

class RevisionObjectTest {

  private static KubeObject parent(String spec) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree(("{'apiVersion':'ctl.example.com/v1','kind':'CatSet',"
        + "'metadata':{'name':'web','namespace':'shop','uid':'uid-1','resourceVersion':'7'},'spec':" + spec + "}")
        .replace('\'', '"')));
  }

  private static final KubeObject PARENT = parent("{'replicas':2,'template':{'metadata':{'labels':{'app':'web'}}}}");

  @Test
  void aNewRevisionIsNamedAfterItsParentAndPatchAndClaimsNothing() {
    RevisionPatch patch = RevisionPatch.of(PARENT.toTree(), List.of());

    RevisionObject latest = RevisionObject.latest("catsets", "ctl.example.com", PARENT, patch);

    assertThat(latest.name()).isEqualTo(RevisionName.of("catsets", "ctl.example.com", "uid-1", patch.goJson()));
    assertThat(latest.uid()).isNull();
    assertThat(latest.claims().isEmpty()).isTrue();
    assertThat(latest.parentPatch()).isEqualTo(patch.fields());
  }

  @Test
  void labelsAreWhatTheParentsSelectorMatchesPlusTheParentResource() {
    assertThat(RevisionObject.labels("catsets", "ctl.example.com", PARENT, true)).containsExactly(
        Map.entry("controller-uid", "uid-1"), Map.entry("metacontroller.k8s.io/apiGroup", "ctl.example.com"),
        Map.entry("metacontroller.k8s.io/resource", "catsets"));
    assertThat(RevisionObject.labels("catsets", "ctl.example.com", PARENT, false)).containsExactly(
        Map.entry("app", "web"), Map.entry("metacontroller.k8s.io/apiGroup", "ctl.example.com"),
        Map.entry("metacontroller.k8s.io/resource", "catsets"));
    assertThat(RevisionObject.labels("catsets", "", parent("{}"), false)).containsOnlyKeys(
        "metacontroller.k8s.io/apiGroup", "metacontroller.k8s.io/resource");
    assertThatThrownBy(() -> RevisionObject.labels("catsets", "g",
        parent("{'template':{'metadata':{'labels':{'app':3}}}}"), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spec.template.metadata.labels.app is not a string");
  }

  @Test
  void theObjectWrittenIsAControlledRevisionInTheParentsNamespace() {
    RevisionObject revision = RevisionObject.latest("catsets", "ctl.example.com", PARENT,
        RevisionPatch.of(PARENT.toTree(), List.of("spec.replicas")))
        .claiming(new RevisionClaims(List.of(new ClaimedChild("", "Pod", "web-0"))));

    ObjectNode object = revision.toObject(PARENT, Map.of("controller-uid", "uid-1"));

    assertThat(object.toString()).isEqualTo(("{'apiVersion':'metacontroller.k8s.io/v1alpha1',"
        + "'kind':'ControllerRevision','metadata':{'name':'" + revision.name() + "','namespace':'shop',"
        + "'labels':{'controller-uid':'uid-1'},'ownerReferences':[{'apiVersion':'ctl.example.com/v1','kind':'CatSet',"
        + "'name':'web','uid':'uid-1','controller':true,'blockOwnerDeletion':true}]},"
        + "'parentPatch':{'spec':{'replicas':2}},'children':[{'apiGroup':'','kind':'Pod','names':['web-0']}]}")
        .replace('\'', '"'));
  }

  @Test
  void aRevisionReadBackFromTheCacheIsTheOneWritten() {
    RevisionObject written = RevisionObject.latest("catsets", "ctl.example.com", PARENT,
        RevisionPatch.of(PARENT.toTree(), List.of())).claiming(new RevisionClaims(List.of(
            new ClaimedChild("", "Pod", "web-0"), new ClaimedChild("", "Pod", "web-1"))));
    ObjectNode stored = written.toObject(PARENT, Map.of());
    ((ObjectNode) stored.get("metadata")).put("uid", "rev-uid").put("resourceVersion", "42");

    RevisionObject read = RevisionObject.read(KubeObject.of(stored));

    assertThat(read).isEqualTo(new RevisionObject(written.name(), "rev-uid", "42", written.parentPatch(),
        written.claims()));
    assertThat(RevisionObject.read(KubeObject.of((ObjectNode) KubeJson.mapper().readTree(
        "{\"metadata\":{\"name\":\"r\"}}"))).parentPatch().isObject()).isTrue();
  }
}
