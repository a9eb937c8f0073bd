package dev.metareactor.engine.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class DecoratorControllerSpecTest {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private static JsonNode controller(String spec) {
    return MAPPER.readTree("{\"apiVersion\":\"metacontroller.k8s.io/v1alpha1\",\"kind\":\"DecoratorController\","
        + "\"metadata\":{\"name\":\"service-per-pod\"},\"spec\":" + spec + "}");
  }

  @Test
  void parsesTargetsWithLabelAndAnnotationSelectorsAttachmentsAndHooks() {
    DecoratorControllerSpec spec = DecoratorControllerSpec.parse(controller("""
        {"resources": [
           {"apiVersion": "apps/v1", "resource": "statefulsets",
            "annotationSelector": {"matchExpressions": [{"key": "service-per-pod-label", "operator": "Exists"}]}},
           {"apiVersion": "v1", "resource": "pods", "ignoreStatusChanges": true,
            "labelSelector": {"matchExpressions": [{"key": "pod-name", "operator": "DoesNotExist"}]},
            "annotationSelector": {"matchAnnotations": {"pod-name-label": "true"}}}],
         "attachments": [{"apiVersion": "v1", "resource": "services", "updateStrategy": {"method": "RollingInPlace"}}],
         "hooks": {"sync": {"webhook": {"url": "http://hook/sync"}},
                   "finalize": {"version": "v2", "webhook": {"url": "http://hook/finalize"}}},
         "resyncPeriodSeconds": 10}"""));
    assertThat(spec.name()).isEqualTo("service-per-pod");
    assertThat(spec.finalizerName()).isEqualTo("metacontroller.io/decoratorcontroller-service-per-pod");
    assertThat(spec.targets()).hasSize(2);
    DecoratorControllerSpec.Target sets = spec.targets().get(0);
    assertThat(sets.annotations().matches(Map.of("service-per-pod-label", "x"))).isTrue();
    assertThat(sets.annotations().matches(Map.of())).isFalse();
    assertThat(sets.labels().isEmpty()).isTrue();
    DecoratorControllerSpec.Target pods = spec.targets().get(1);
    assertThat(pods.ignoreStatusChanges()).isTrue();
    assertThat(pods.annotations().matches(Map.of("pod-name-label", "true"))).isTrue();
    assertThat(pods.labels().matches(Map.of("pod-name", "x"))).isFalse();
    assertThat(spec.attachments()).singleElement().satisfies(rule ->
        assertThat(rule.updateMethod()).as("accepted, applied as InPlace, as upstream")
            .isEqualTo(UpdateMethod.ROLLING_IN_PLACE));
    assertThat(spec.finalizeHook()).get().extracting(HookSpec::version).isEqualTo(HookSpec.HookVersion.V2);
    assertThat(spec.resyncPeriodSeconds()).isEqualTo(10);
  }

  @Test
  void errorsNameTheField() {
    assertThatThrownBy(() -> DecoratorControllerSpec.parse(controller("{\"hooks\": {}}")))
        .hasMessage("spec.resources: at least one resource is required");
    assertThatThrownBy(() -> DecoratorControllerSpec.parse(controller("""
        {"resources": [{"apiVersion": "v1", "resource": "pods",
                        "annotationSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}],
         "hooks": {"sync": {"webhook": {"url": "u"}}}}""")))
        .hasMessageStartingWith("spec.resources[0].annotationSelector: ");
    assertThatThrownBy(() -> DecoratorControllerSpec.parse(controller("""
        {"resources": [{"apiVersion": "v1", "resource": "pods"}, {"apiVersion": "v1", "resource": "pods"}],
         "hooks": {"sync": {"webhook": {"url": "u"}}}}"""))).hasMessageContaining("is listed twice");
    assertThatThrownBy(() -> DecoratorControllerSpec.parse(controller("""
        {"resources": [{"apiVersion": "v1", "resource": "pods"}], "hooks": {}}""")))
        .hasMessage("spec.hooks: neither a sync nor a finalize hook is defined");
  }
}
