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
      Map<String, Object> spec = spec(kind.controllerObject(HOOK, HookKind.WEBHOOK, 3, false, 10, true));
      assertThat(spec.get("resyncPeriodSeconds")).isEqualTo(10);
      Map<String, Object> hooks = map(spec.get("hooks"));
      assertThat(hooks.keySet()).containsExactlyInAnyOrder("sync", "customize");
      assertThat(hooks.get("customize")).isEqualTo(Map.of("webhook", Map.of("url", HOOK + "/customize")));
    }
  }

  @Test
  void withoutThemTheSpecIsAsBefore() {
    Map<String, Object> spec = spec(ControllerKind.COMPOSITE.controllerObject(HOOK, HookKind.WEBHOOK, 3, false, 0,
        false));
    assertThat(spec).doesNotContainKey("resyncPeriodSeconds").containsKeys("parentResource", "childResources");
    assertThat(map(spec.get("hooks")).keySet()).containsExactly("sync");
  }

  @Test
  void aMapControllerHasNoCustomizeHook() {
    assertThat(spec(ControllerKind.MAP.controllerObject(HOOK, HookKind.WEBHOOK, 3, false, 5, false))
        .get("resyncPeriodSeconds")).isEqualTo(5);
    assertThatThrownBy(() -> ControllerKind.MAP.controllerObject(HOOK, HookKind.WEBHOOK, 3, false, 0, true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("customize");
  }

  @Test
  void aCelSyncHookTakesTheWebhooksPlaceAndItsShadowStaysTheGoHook() {
    Map<String, Object> spec = spec(ControllerKind.COMPOSITE.controllerObject(HOOK, HookKind.CEL, 3, false, 0, false));
    assertThat(map(spec.get("hooks")).get("sync")).isEqualTo(Map.of("cel",
        Map.of("expression", CelSync.expression(3))));
    assertThat(CelSync.expression(3)).contains("[0, 1, 2].filter(i, i < parent.spec.?children.orValue(0))",
        "'payload': 'abcdefghijklmnopqrstuvwxyzabcdef");
    assertThat(CelSync.PAYLOAD).hasSize(256).endsWith("stuv");

    GenericKubernetesResource shadowed = new KubernetesSerialization().unmarshal(
        ControllerKind.COMPOSITE.controllerObject(HOOK, HookKind.CEL, 3, true, 0, false),
        GenericKubernetesResource.class);
    assertThat(shadowed.getMetadata().getAnnotations())
        .containsEntry("metareactor.dev/shadow-sync-url", HOOK + "/sync");
  }

  @Test
  void aCelRunIsACompositeControllerRelatingToNothingInThePhasesThatDoNotCountTheGoHooksCalls() {
    List<String> phases = List.of("converge", "update", "idle");
    assertThat(HookKind.CEL.refusal(ControllerKind.COMPOSITE, 0, phases)).isNull();
    assertThat(HookKind.CEL.refusal(ControllerKind.DECORATOR, 0, phases)).contains("not decorator");
    assertThat(HookKind.CEL.refusal(ControllerKind.COMPOSITE, 2, phases)).contains("no --related");
    assertThat(HookKind.CEL.refusal(ControllerKind.COMPOSITE, 0, List.of("converge", "restart")))
        .contains("not [restart]");
    assertThat(HookKind.WEBHOOK.refusal(ControllerKind.MAP, 0, List.of("restart"))).isNull();
    assertThatThrownBy(() -> ControllerKind.MAP.controllerObject(HOOK, HookKind.CEL, 3, false, 0, false))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CEL");
    assertThat(HookKind.CEL.engineName("metareactor")).isEqualTo("metareactor-cel");
    assertThat(HookKind.WEBHOOK.engineName("metareactor")).isEqualTo("metareactor");
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
