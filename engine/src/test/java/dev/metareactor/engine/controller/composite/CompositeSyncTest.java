package dev.metareactor.engine.controller.composite;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.apply.DynamicApply;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A CompositeController's sync in the middle tier: the real {@link ObjectSync}, {@link CompositeSync}, claimer,
 * children manager and finalizers over in-memory informer caches, an API that records every request and a hook as a
 * lambda. No cluster; milliseconds.
 */
class CompositeSyncTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final String PARENT_UID = "parent-uid";

  private final RecordingApi api = new RecordingApi();
  private final FakeInformerLease parents = new FakeInformerLease(THINGS);
  private final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  /** What the hook answers: its children's {@code data.value}. */
  private final AtomicReference<String> value = new AtomicReference<>("one");
  private final AtomicReference<String> childName = new AtomicReference<>("child");
  private final AtomicReference<String> status = new AtomicReference<>("{}");
  private final ObjectSync<ParentKey> sync;

  CompositeSyncTest() {
    ObjectNode controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things"},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps",
                                      "updateStrategy": {"method": "InPlace"}}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}}}}""");
    CompositeControllerSpec spec = CompositeControllerSpec.parse(controller);
    Finalizers finalizers = new Finalizers(spec.finalizerName(), api);
    SyncedResource parentType = new SyncedResource(THINGS, parents,
        parent -> spec.parentSelector().matches(parent.labels()), finalizers);
    List<ChildType> childTypes = List.of(new ChildType(CONFIG_MAPS, configMaps, spec.children().get(0).updateMethod()));
    CompositeSync kind = new CompositeSync(spec, parentType, childTypes, new ChildClaimer(api), api);
    ObjectSync.ChosenHook hook = new ObjectSync.ChosenHook("sync", (request, root) -> answer(), spec.syncHook().get());
    sync = new ObjectSync<>(kind, CompositeSync.SHAPE, "CompositeController things", controller,
        new ObjectSync.Hooks(hook, null),
        new RelatedObjects<>("CompositeController", "things", controller, null, Optional.empty(), null, key -> {}),
        new ChildrenManager(api), finalizers);
  }

  /** The hook: one ConfigMap child with the current value, and the current status. */
  private Mono<JsonNode> answer() {
    return Mono.just(KubeJson.mapper().readTree("""
        {"status": %s, "children": [{"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "%s", "namespace": "team"}, "data": {"value": "%s"}}]}"""
        .formatted(status.get(), childName.get(), value.get())));
  }

  private void parentWithStatus(String status) {
    parents.put(KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "p", "namespace": "team", "uid": "%s", "generation": 1, "resourceVersion": "7"},
         "spec": {}, "status": %s}""".formatted(PARENT_UID, status))));
  }

  /** The child as the engine created it before (last-applied annotation, ControllerRef, selector label). */
  private void childAsCreated(String name, String data) {
    ObjectNode desired = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "%s", "namespace": "team", "labels": {"%s": "%s"}}, "data": {"value": "%s"}}"""
        .formatted(name, ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID, data));
    ObjectNode created = DynamicApply.create(desired).object();
    ObjectNode metadata = (ObjectNode) created.get("metadata");
    metadata.put("uid", name + "-uid").put("resourceVersion", "9");
    OwnerRef.controllerOf(parents.get("team", "p").orElseThrow()).appendTo(metadata.putArray("ownerReferences"));
    configMaps.put(KubeObject.of(created));
  }

  private Optional<Duration> run() {
    return sync.sync(new ParentKey("team", "p")).block(Duration.ofSeconds(5));
  }

  @Test
  void aConvergedParentMakesNoApiRequest() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");

    run();

    assertThat(api.actions()).as("a steady-state sync reads caches only").isEmpty();
  }

  @Test
  void aChangedChildIsUpdatedInPlaceAndNothingElseIsWritten() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");
    value.set("two");

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("update configmaps team/child");
    assertThat(api.actions().get(0).body()).contains("\"value\":\"two\"");
  }

  @Test
  void aNewChildIsCreatedWithItsControllerRefAndTheOldOneDeleted() {
    parentWithStatus("{\"observedGeneration\": 1}");
    childAsCreated("child", "one");
    childName.set("renamed");

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString)
        .containsExactlyInAnyOrder("create configmaps team/renamed", "delete configmaps team/child");
    String created = api.actions().stream().filter(action -> action.verb().equals("create")).findFirst()
        .orElseThrow().body();
    assertThat(created).contains("\"uid\":\"" + PARENT_UID + "\"").contains("\"controller\":true")
        .contains(ChildSelector.CONTROLLER_UID_LABEL);
  }

  @Test
  void aStatusThatDiffersIsWrittenOnceAsAUidGuardedPatch() {
    parentWithStatus("{}");
    childAsCreated("child", "one");

    run();

    assertThat(api.actions()).extracting(RecordingApi.Action::toString).containsExactly("patch-status things team/p");
    assertThat(api.actions().get(0).body()).contains("\"op\":\"test\"").contains(PARENT_UID)
        .contains("\"observedGeneration\":1");
  }

  @Test
  void statusNumbersAreWrittenAsGoWritesThem() {
    parentWithStatus("{}");
    childAsCreated("child", "one");
    status.set("{\"replicas\": 2.0, \"ratio\": 1E+2}");

    run();

    assertThat(api.actions().get(0).body()).contains("\"ratio\":100,").contains("\"replicas\":2}");
  }

  @Test
  void aParentThatIsGoneIsNoSync() {
    assertThat(run()).isEmpty();
    assertThat(api.actions()).isEmpty();
  }
}
