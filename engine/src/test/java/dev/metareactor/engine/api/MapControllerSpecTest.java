package dev.metareactor.engine.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Parsing a MapController: what it declares, and a message naming the field for each way it can be wrong. */
class MapControllerSpecTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();
  private static final String HOOKS = "\"hooks\": {\"map\": {\"webhook\": {\"url\": \"http://hook/map\"}}}";

  private static JsonNode controller(String spec) {
    return MAPPER.readTree("{\"apiVersion\":\"metacontroller.k8s.io/v1alpha1\",\"kind\":\"MapController\","
        + "\"metadata\":{\"name\":\"snapshots\"},\"spec\":" + spec + "}");
  }

  @Test
  void parsesParentInputsOutputsAndHooks() {
    MapControllerSpec spec = MapControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "example.com/v1", "resource": "snapshotschedules",
                            "labelSelector": {"matchLabels": {"tier": "gold"}}},
         "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
         "outputResources": [{"apiVersion": "example.com/v1", "resource": "snapshots",
                              "updateStrategy": {"method": "InPlace"}}],
         "resyncPeriodSeconds": 5,
         "hooks": {"map": {"webhook": {"url": "http://hook/map"}},
                   "tombstone": {"version": "v2", "webhook": {"url": "http://hook/tombstone"}}}}"""));

    assertThat(spec.kind()).isEqualTo("MapController");
    assertThat(spec.finalizerName()).isEqualTo("metacontroller.io/mapcontroller-snapshots");
    assertThat(spec.parent()).isEqualTo(new ResourceRule("example.com/v1", "snapshotschedules"));
    assertThat(spec.parentSelector().matches(Map.of("tier", "gold"))).isTrue();
    assertThat(spec.inputs()).containsExactly(new ResourceRule("v1", "persistentvolumeclaims"));
    assertThat(spec.outputs()).containsExactly(
        new ChildResourceRule(new ResourceRule("example.com/v1", "snapshots"), UpdateMethod.IN_PLACE));
    assertThat(spec.resyncPeriodSeconds()).isEqualTo(5);
    assertThat(spec.hooksByName()).containsOnlyKeys("map", "tombstone");
    assertThat(spec.tombstoneHook()).get().extracting(HookSpec::version).isEqualTo(HookSpec.HookVersion.V2);
  }

  @Test
  void namesTheFieldThatIsWrong() {
    String parent = "\"parentResource\": {\"apiVersion\": \"example.com/v1\", \"resource\": \"schedules\"}";
    String inputs = "\"inputResources\": [{\"apiVersion\": \"v1\", \"resource\": \"persistentvolumeclaims\"}]";
    String outputs = "\"outputResources\": [{\"apiVersion\": \"example.com/v1\", \"resource\": \"snapshots\"}]";

    assertThatThrownBy(() -> MapControllerSpec.parse(controller("{" + inputs + "," + outputs + "," + HOOKS + "}")))
        .hasMessage("spec.parentResource: required");
    assertThatThrownBy(() -> MapControllerSpec.parse(controller("{" + parent + "," + outputs + "," + HOOKS + "}")))
        .hasMessage("spec.inputResources: at least one resource is required");
    assertThatThrownBy(() -> MapControllerSpec.parse(controller("{" + parent + "," + inputs + "," + HOOKS + "}")))
        .hasMessage("spec.outputResources: at least one resource is required");
    assertThatThrownBy(() -> MapControllerSpec.parse(controller("{" + parent + "," + inputs + "," + outputs
        + ", \"hooks\": {\"tombstone\": {\"webhook\": {\"url\": \"http://hook/t\"}}}}")))
        .hasMessage("spec.hooks.map: required");
    assertThatThrownBy(() -> MapControllerSpec.parse(controller("{" + parent + ", \"inputResources\": ["
        + "{\"apiVersion\": \"v1\", \"resource\": \"pods\"}, {\"apiVersion\": \"v1\", \"resource\": \"pods\"}],"
        + outputs + "," + HOOKS + "}")))
        .hasMessage("spec.inputResources[1]: pods (v1) is listed twice");
    assertThatThrownBy(() -> MapControllerSpec.parse(controller("{" + parent + "," + inputs
        + ", \"outputResources\": [{\"apiVersion\": \"v1\", \"resource\": \"configmaps\","
        + " \"updateStrategy\": {\"method\": \"RollingInPlace\"}}]," + HOOKS + "}")))
        .isInstanceOf(InvalidControllerException.class)
        .hasMessageStartingWith("spec.outputResources[0].updateStrategy.method: RollingInPlace is not supported");
  }
}
