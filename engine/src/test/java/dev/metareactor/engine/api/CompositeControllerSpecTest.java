package dev.metareactor.engine.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class CompositeControllerSpecTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private static JsonNode controller(String spec) {
    return MAPPER.readTree("{\"apiVersion\":\"metacontroller.k8s.io/v1alpha1\",\"kind\":\"CompositeController\","
        + "\"metadata\":{\"name\":\"web\"},\"spec\":" + spec + "}");
  }

  @Test
  void parsesEveryField() {
    CompositeControllerSpec spec = CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "ex.com/v1", "resource": "webs", "ignoreStatusChanges": true,
                            "labelSelector": {"matchLabels": {"tier": "front"}}},
         "childResources": [
           {"apiVersion": "v1", "resource": "pods", "updateStrategy": {"method": "Recreate"}},
           {"apiVersion": "apps/v1", "resource": "deployments", "updateStrategy": {"method": "InPlace"}},
           {"apiVersion": "v1", "resource": "configmaps"}],
         "hooks": {"sync": {"webhook": {"url": "http://hook/sync"}},
                   "finalize": {"version": "v2", "webhook": {"url": "http://hook/finalize"}}},
         "resyncPeriodSeconds": 30, "generateSelector": true}"""));
    assertThat(spec.name()).isEqualTo("web");
    assertThat(spec.parent()).isEqualTo(new ResourceRule("ex.com/v1", "webs"));
    assertThat(spec.parent().group()).isEqualTo("ex.com");
    assertThat(spec.ignoreStatusChanges()).isTrue();
    assertThat(spec.parentSelector().matches(Map.of("tier", "front"))).isTrue();
    assertThat(spec.parentSelector().matches(Map.of("tier", "back"))).isFalse();
    assertThat(spec.children()).extracting(ChildResourceRule::updateMethod)
        .containsExactly(UpdateMethod.RECREATE, UpdateMethod.IN_PLACE, UpdateMethod.ON_DELETE);
    assertThat(spec.syncHook()).get().extracting(HookSpec::version).isEqualTo(HookSpec.HookVersion.V1);
    assertThat(spec.finalizeHook()).get().extracting(HookSpec::version).isEqualTo(HookSpec.HookVersion.V2);
    assertThat(spec.customizeHook()).isEmpty();
    assertThat(spec.resyncPeriodSeconds()).isEqualTo(30);
    assertThat(spec.generateSelector()).isTrue();
    assertThat(spec.finalizerName()).isEqualTo("metacontroller.io/compositecontroller-web");
  }

  @Test
  void readsWhatRollingUpdatesUseRevisionFieldPathsAndStatusChecks() {
    CompositeControllerSpec spec = CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "ex.com/v1", "resource": "webs",
                            "revisionHistory": {"fieldPaths": ["spec.template", "metadata.labels"]}},
         "childResources": [
           {"apiVersion": "v1", "resource": "pods", "updateStrategy": {"method": "RollingInPlace",
            "statusChecks": {"conditions": [{"type": "Ready", "status": "True"},
                                            {"type": "Healthy", "reason": "Probed"}]}}},
           {"apiVersion": "v1", "resource": "configmaps", "updateStrategy": {"statusChecks": {}}}],
         "hooks": {"sync": {"webhook": {"url": "http://hook/sync"}}}}"""));

    assertThat(spec.revisionFieldPaths()).containsExactly("spec.template", "metadata.labels");
    assertThat(spec.children().get(0).updateMethod()).isEqualTo(UpdateMethod.ROLLING_IN_PLACE);
    assertThat(spec.children().get(0).statusChecks()).containsExactly(new StatusCheck("Ready", "True", null),
        new StatusCheck("Healthy", null, "Probed"));
    assertThat(spec.children().get(1).statusChecks()).isEmpty();
    assertThat(CompositeControllerSpec.parse(controller(
        "{\"parentResource\": {\"apiVersion\": \"v1\", \"resource\": \"x\"}, \"hooks\": {\"sync\": {\"webhook\":"
        + " {\"url\": \"u\"}}}}")).revisionFieldPaths()).isEmpty();
  }

  @Test
  void malformedRevisionFieldPathsAndStatusChecksAreNamed() {
    String hooks = ", \"hooks\": {\"sync\": {\"webhook\": {\"url\": \"u\"}}}}";
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("{\"parentResource\": {\"apiVersion\": \"v1\","
        + " \"resource\": \"x\", \"revisionHistory\": {\"fieldPaths\": \"spec\"}}" + hooks)))
        .hasMessage("spec.parentResource.revisionHistory.fieldPaths: must be a list");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("{\"parentResource\": {\"apiVersion\": \"v1\","
        + " \"resource\": \"x\", \"revisionHistory\": {\"fieldPaths\": [\"spec\", \"spec..x\"]}}" + hooks)))
        .hasMessage("spec.parentResource.revisionHistory.fieldPaths[1]: \"spec..x\" has an empty segment");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("{\"parentResource\": {\"apiVersion\": \"v1\","
        + " \"resource\": \"x\"}, \"childResources\": [{\"apiVersion\": \"v1\", \"resource\": \"pods\","
        + " \"updateStrategy\": {\"statusChecks\": {\"conditions\": [{\"status\": \"True\"}]}}}]" + hooks)))
        .hasMessage("spec.childResources[0].updateStrategy.statusChecks.conditions[0].type: required");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("{\"parentResource\": {\"apiVersion\": \"v1\","
        + " \"resource\": \"x\"}, \"childResources\": [{\"apiVersion\": \"v1\", \"resource\": \"pods\","
        + " \"updateStrategy\": {\"statusChecks\": {\"conditions\": {}}}}]" + hooks)))
        .hasMessage("spec.childResources[0].updateStrategy.statusChecks.conditions: must be a list");
  }

  @Test
  void ignoreStatusChangesOfAChildTypeIsReadAndRefusedWhereTheChildrensStatusIsWaitedFor() {
    String start = "{\"parentResource\": {\"apiVersion\": \"v1\", \"resource\": \"x\"}, \"childResources\": [";
    String hooks = "], \"hooks\": {\"sync\": {\"webhook\": {\"url\": \"u\"}}}}";
    CompositeControllerSpec spec = CompositeControllerSpec.parse(controller(start
        + "{\"apiVersion\": \"v1\", \"resource\": \"pods\", \"ignoreStatusChanges\": true},"
        + "{\"apiVersion\": \"v1\", \"resource\": \"configmaps\"}" + hooks));
    assertThat(spec.children()).extracting(ChildResourceRule::ignoreStatusChanges).containsExactly(true, false);
    assertThat(spec.ignoreStatusChanges()).as("the parent's own switch").isFalse();

    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller(start
        + "{\"apiVersion\": \"v1\", \"resource\": \"pods\", \"ignoreStatusChanges\": true, \"updateStrategy\":"
        + " {\"method\": \"InPlace\", \"statusChecks\": {\"conditions\": [{\"type\": \"Ready\"}]}}}" + hooks)))
        .hasMessage("spec.childResources[0].ignoreStatusChanges: cannot be true while"
            + " spec.childResources[0].updateStrategy.statusChecks waits for the status of these objects");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller(start
        + "{\"apiVersion\": \"v1\", \"resource\": \"pods\", \"ignoreStatusChanges\": true, \"updateStrategy\":"
        + " {\"method\": \"RollingRecreate\"}}" + hooks)))
        .hasMessage("spec.childResources[0].ignoreStatusChanges: cannot be true while"
            + " spec.childResources[0].updateStrategy.method RollingRecreate waits for the status of these objects");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller(start
        + "{\"apiVersion\": \"v1\", \"resource\": \"pods\", \"ignoreStatusChanges\": \"yes\"}" + hooks)))
        .hasMessage("spec.childResources[0].ignoreStatusChanges: must be true or false");
  }

  @Test
  void errorsNameTheField() {
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("{}")))
        .hasMessage("spec.parentResource: required");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller(
        "{\"parentResource\": {\"apiVersion\": \"v1\"}, \"hooks\": {\"sync\": {\"webhook\": {\"url\": \"u\"}}}}")))
        .hasMessage("spec.parentResource.resource: required");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller(
        "{\"parentResource\": {\"apiVersion\": \"v1\", \"resource\": \"x\"}}")))
        .hasMessage("spec.hooks: no hooks defined");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller(
        "{\"parentResource\": {\"apiVersion\": \"v1\", \"resource\": \"x\"}, \"hooks\": {\"customize\": {\"webhook\":"
        + " {}}}}")))
        .hasMessage("spec.hooks: neither a sync nor a finalize hook is defined");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "v1", "resource": "x"},
         "childResources": [{"apiVersion": "v1", "resource": "pods", "updateStrategy": {"method": "Sometimes"}}],
         "hooks": {"sync": {"webhook": {"url": "u"}}}}""")))
        .hasMessageStartingWith("spec.childResources[0].updateStrategy.method: unknown update method \"Sometimes\"");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "v1", "resource": "x",
                            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}},
         "hooks": {"sync": {"webhook": {"url": "u"}}}}""")))
        .hasMessageStartingWith("spec.parentResource.labelSelector: ");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "v1", "resource": "x"},
         "hooks": {"sync": {"version": "v3", "webhook": {"url": "u"}}}}""")))
        .hasMessageStartingWith("spec.hooks.sync.version: unknown hook version \"v3\"");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "v1", "resource": "x"},
         "childResources": [{"apiVersion": "v1", "resource": "pods"}, {"apiVersion": "v1", "resource": "pods"}],
         "hooks": {"sync": {"webhook": {"url": "u"}}}}""")))
        .hasMessageContaining("is listed twice");
    assertThatThrownBy(() -> CompositeControllerSpec.parse(controller("""
        {"parentResource": {"apiVersion": "v1", "resource": "x"}, "resyncPeriodSeconds": -1,
         "hooks": {"sync": {"webhook": {"url": "u"}}}}""")))
        .hasMessage("spec.resyncPeriodSeconds: must be a non-negative integer");
  }
}
