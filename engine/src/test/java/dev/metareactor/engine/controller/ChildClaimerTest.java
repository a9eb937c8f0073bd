package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.selector.LabelSelector;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@link ChildClaimer}, ControllerRef's rules over in-memory caches: take what matches and nobody controls (after the
 * one uncached check that the parent still exists), let go of what no longer matches, never touch another
 * controller's objects, and make no request when every claimed child matches.
 */
class ChildClaimerTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final LabelSelector APP_WEB = LabelSelector.fromApi(KubeJson.mapper().readTree(
      "{\"matchLabels\": {\"app\": \"web\"}}"));

  private final RecordingApi api = new RecordingApi();
  private final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  private final ChildType type = new ChildType(CONFIG_MAPS, configMaps, UpdateMethod.IN_PLACE);
  private final KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
      {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
       "metadata": {"name": "p", "namespace": "team", "uid": "parent-uid", "resourceVersion": "5"}}"""));

  private KubeObject configMap(String name, String app, KubeObject controller) {
    ObjectNode object = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "%s", "namespace": "team", "uid": "%s-uid", "resourceVersion": "8",
                      "labels": {"app": "%s"}}}""".formatted(name, name, app));
    if (controller != null) {
      OwnerRef.controllerOf(controller).appendTo(((ObjectNode) object.get("metadata")).putArray("ownerReferences"));
    }
    KubeObject configMap = KubeObject.of(object);
    configMaps.put(configMap);
    api.holding(CONFIG_MAPS, configMap);
    return configMap;
  }

  private Map<ChildType, List<KubeObject>> claim() {
    return new ChildClaimer(api).claim(parent, THINGS, APP_WEB, List.of(type)).block(Duration.ofSeconds(5));
  }

  @Test
  void childrenThatMatchAreClaimedWithoutARequest() {
    configMap("mine", "web", parent);

    assertThat(claim().get(type)).extracting(KubeObject::name).containsExactly("mine");
    assertThat(api.actions()).isEmpty();
  }

  @Test
  void aMatchingOrphanIsAdoptedAfterTheParentIsReadOnce() {
    api.holding(THINGS, parent);
    configMap("orphan", "web", null);
    configMap("stranger", "db", null);

    assertThat(claim().get(type)).extracting(KubeObject::name).containsExactly("orphan");
    assertThat(api.actions()).extracting(RecordingApi.Action::toString)
        .containsExactly("get things team/p", "patch configmaps team/orphan");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(1).body());
    assertThat(patch.path("metadata").path("resourceVersion").asString()).isEqualTo("8");
    assertThat(patch.path("metadata").path("ownerReferences").get(0).path("uid").asString()).isEqualTo("parent-uid");
    assertThat(patch.path("metadata").path("ownerReferences").get(0).path("controller").asBoolean()).isTrue();
  }

  @Test
  void aChildThatNoLongerMatchesIsReleasedAndAnotherControllersIsLeftAlone() {
    configMap("drifted", "db", parent);
    KubeObject other = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "q", "namespace": "team", "uid": "other-uid"}}"""));
    configMap("theirs", "web", other);

    assertThat(claim().get(type)).isEmpty();
    assertThat(api.actions()).extracting(RecordingApi.Action::toString)
        .containsExactly("patch configmaps team/drifted");
    JsonNode patch = KubeJson.mapper().readTree(api.actions().get(0).body());
    assertThat(patch.path("metadata").path("ownerReferences").isEmpty()).isTrue();
  }

  @Test
  void aParentThatIsGoneAdoptsNothing() {
    configMap("orphan", "web", null);

    assertThat(catchThrowable(this::claim)).hasMessageContaining("has been deleted");
    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("get things team/p");
  }
}
