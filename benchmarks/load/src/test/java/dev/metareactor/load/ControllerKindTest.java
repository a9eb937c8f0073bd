package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The controller objects the scenarios give every engine. */
class ControllerKindTest {

  private static final String HOOK = "http://127.0.0.1:4242";

  @Test
  void aResyncPeriodAndACustomizeHookGoIntoTheSpec() {
    for (ControllerKind kind : List.of(ControllerKind.COMPOSITE, ControllerKind.DECORATOR)) {
      Map<String, Object> spec = spec(kind.controllerObject(HOOK, false, 10, true));
      assertThat(spec.get("resyncPeriodSeconds")).isEqualTo(10);
      Map<String, Object> hooks = map(spec.get("hooks"));
      assertThat(hooks.keySet()).containsExactlyInAnyOrder("sync", "customize");
      assertThat(hooks.get("customize")).isEqualTo(Map.of("webhook", Map.of("url", HOOK + "/customize")));
    }
  }

  @Test
  void withoutThemTheSpecIsAsBefore() {
    Map<String, Object> spec = spec(ControllerKind.COMPOSITE.controllerObject(HOOK, false, 0, false));
    assertThat(spec).doesNotContainKey("resyncPeriodSeconds").containsKeys("parentResource", "childResources");
    assertThat(map(spec.get("hooks")).keySet()).containsExactly("sync");
  }

  @Test
  void aMapControllerHasNoCustomizeHook() {
    assertThat(spec(ControllerKind.MAP.controllerObject(HOOK, false, 5, false)).get("resyncPeriodSeconds"))
        .isEqualTo(5);
    assertThatThrownBy(() -> ControllerKind.MAP.controllerObject(HOOK, false, 0, true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("customize");
  }

  @Test
  void percentilesAreNearestRank() {
    List<Double> sorted = List.of(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0);
    assertThat(LoadRun.percentile(sorted, 0.5)).isEqualTo(5.0);
    assertThat(LoadRun.percentile(sorted, 0.9)).isEqualTo(9.0);
    assertThat(LoadRun.percentile(sorted, 0.99)).isEqualTo(10.0);
    assertThat(LoadRun.percentile(List.of(7.0), 0.01)).isEqualTo(7.0);
    assertThat(LoadRun.percentile(List.of(), 0.5)).isZero();
  }

  private static Map<String, Object> spec(String yaml) {
    GenericKubernetesResource controller = new KubernetesSerialization().unmarshal(yaml,
        GenericKubernetesResource.class);
    return map(controller.getAdditionalProperties().get("spec"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }
}
