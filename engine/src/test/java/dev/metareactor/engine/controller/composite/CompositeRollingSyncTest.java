package dev.metareactor.engine.controller.composite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.ChosenHook;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.controller.rolling.RollingUpdate;
import dev.metareactor.engine.controller.rolling.Rollout;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A rolling CompositeController's sync in the middle tier: the real {@link ObjectSync}, {@link CompositeSync},
 * {@link RollingUpdate}, claimer and children manager over in-memory caches that the test refreshes from the
 * recording API when it wants the informers to catch up (and leaves stale when it does not). Three ConfigMap
 * children under {@code RollingInPlace} with a {@code Ready} status check; the hook answers each with the
 * parent's {@code spec.version}. The controller carries {@code metareactor.dev/delete-guard: "true"}, which a rollout
 * never meets (it deletes no child) but an answer dropping children does.
 */
class CompositeRollingSyncTest {

  private static final ApiResource THINGS = CompositeSyncFixture.THINGS;
  private static final ApiResource CONFIG_MAPS = CompositeSyncFixture.CONFIG_MAPS;
  private static final ApiResource REVISIONS = new ApiResource("metacontroller.k8s.io", "v1alpha1",
      "controllerrevisions", "ControllerRevision", true, Set.of());
  private static final String NS = CompositeSyncFixture.NAMESPACE;

  private final RecordingApi api = new RecordingApi();
  private final FakeInformerLease parents = new FakeInformerLease(THINGS);
  private final FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS);
  private final FakeInformerLease revisions = new FakeInformerLease(REVISIONS);
  /** Each hook call: the version of the parent it was sent. */
  private final List<String> calls = new ArrayList<>();
  /** The parent version whose answer lists {@code c0} alone, if any. */
  private volatile String onlyC0For;
  private final ObjectSync<ParentKey> sync;

  CompositeRollingSyncTest() {
    ObjectNode controller = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
         "metadata": {"name": "things", "annotations": {"metareactor.dev/delete-guard": "true"}},
         "spec": {"generateSelector": true,
                  "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                  "childResources": [{"apiVersion": "v1", "resource": "configmaps",
                                      "updateStrategy": {"method": "RollingInPlace",
                                        "statusChecks": {"conditions": [{"type": "Ready", "status": "True"}]}}}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook.invalid/sync"}}}}}""");
    CompositeControllerSpec spec = CompositeControllerSpec.parse(controller);
    Finalizers finalizers = new Finalizers(spec.finalizerName(), api);
    SyncedResource parentType = new SyncedResource(THINGS, parents, parent -> true, finalizers);
    List<ChildType> childTypes = List.of(new ChildType(CONFIG_MAPS, configMaps, UpdateMethod.ROLLING_IN_PLACE));
    ChildClaimer claimer = new ChildClaimer(api);
    ChildApplier applier = ChildApplier.of(ApplyStrategy.DYNAMIC_APPLY, api, "metacontroller");
    RollingUpdate rolling = new RollingUpdate(THINGS, List.of(), true,
        List.of(new Rollout.Rule("", "ConfigMap", UpdateMethod.ROLLING_IN_PLACE,
            spec.children().get(0).statusChecks())),
        new ChildType(REVISIONS, revisions, UpdateMethod.ON_DELETE), claimer, api, applier, Map.of(), 4);
    CompositeSync kind = new CompositeSync(spec, parentType, childTypes, claimer, api, rolling,
        (object, eventType, reason, message) -> { }, false);
    ChosenHook hook = new ChosenHook("sync", (request, root) -> answer(request), spec.syncHook().orElseThrow(),
        ChosenHook.Purpose.DESIRED_STATE);
    sync = new ObjectSync<>(kind, CompositeSync.SHAPE, "CompositeController things", controller,
        new ObjectSync.Hooks(hook, null),
        new RelatedObjects<>("CompositeController", "things", controller, null, Optional.empty(), null,
            (key, trigger) -> {}),
        new ChildrenManager(api, applier, (object, eventType, reason, message) -> { }), finalizers,
        (object, eventType, reason, message) -> { });
  }

  /** Whether the hook answers {@code deleteParent: true} (the controller does not allow it). */
  private volatile boolean deleteParent;

  private synchronized Mono<JsonNode> answer(JsonNode request) {
    String version = request.path("parent").path("spec").path("version").asString();
    calls.add(version);
    StringBuilder children = new StringBuilder();
    for (int i = 0; i < (version.equals(onlyC0For) ? 1 : 3); i++) {
      children.append(i == 0 ? "" : ",").append("""
          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c%d"}, "data": {"version": "%s"}}"""
          .formatted(i, version));
    }
    return Mono.just(KubeJson.mapper().readTree("{\"status\": {}, " + (deleteParent ? "\"deleteParent\": true, " : "")
        + "\"children\": [" + children + "]}"));
  }

  private void parent(String version, long generation) {
    KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "p", "namespace": "%s", "uid": "p-uid", "generation": %d, "resourceVersion": "%d"},
         "spec": {"version": "%s"}}""".formatted(NS, generation, generation, version)));
    parents.put(parent);
    api.holding(THINGS, parent);
  }

  private void syncOnce() {
    api.clearActions();
    calls.clear();
    sync.sync(new ParentKey(NS, "p")).block(Duration.ofSeconds(5));
  }

  /** The informers catch up with the API: what it keeps is cached, what it no longer keeps is gone. */
  private void refresh() {
    for (FakeInformerLease informer : List.of(configMaps, revisions)) {
      List<KubeObject> kept = api.objects(informer.resource());
      for (KubeObject cached : informer.list()) {
        if (kept.stream().noneMatch(object -> object.name().equals(cached.name()))) {
          informer.deliver(new ObjectEvent(ObjectEvent.Type.DELETED, null, cached));
        }
      }
      kept.forEach(informer::put);
    }
  }

  /** Sets the child's {@code Ready} condition, in the API and the cache (as a kubelet's status write would). */
  private void ready(String name, boolean ready) {
    ObjectNode child = configMaps.get(NS, name).orElseThrow().toTree();
    child.putObject("status").putArray("conditions").addObject().put("type", "Ready")
        .put("status", ready ? "True" : "False");
    KubeObject updated = KubeObject.of(child);
    configMaps.put(updated);
    api.holding(CONFIG_MAPS, updated);
  }

  private List<String> writes() {
    return api.actions().stream().filter(action -> !action.verb().equals("get")).map(Object::toString).toList();
  }

  private String version(String child) {
    return api.object(CONFIG_MAPS, NS, child).orElseThrow().toTree().path("data").path("version").asString();
  }

  private String lastStatus() {
    List<RecordingApi.Action> statusWrites = api.actions().stream()
        .filter(action -> action.verb().equals("patch-status")).toList();
    return statusWrites.isEmpty() ? "" : statusWrites.get(statusWrites.size() - 1).body();
  }

  private List<String> revisionNames() {
    return api.objects(REVISIONS).stream().map(KubeObject::name).sorted().toList();
  }

  /** A parent on v1 with every child created, claimed by one revision, and Ready. */
  private void convergedOnV1() {
    parent("v1", 1);
    syncOnce();
    assertThat(writes()).filteredOn(write -> write.startsWith("create configmaps")).hasSize(3);
    assertThat(writes()).filteredOn(write -> write.startsWith("create controllerrevisions")).hasSize(1);
    assertThat(lastStatus()).contains("\"reason\":\"OnLatestRevision\"");
    refresh();
    for (String child : List.of("c0", "c1", "c2")) {
      ready(child, true);
    }
    syncOnce();
    assertThat(writes()).as("converged").isEmpty();
  }

  @Test
  void aChangeRollsOneChildAtATimeEachGatedOnTheStatusCheck() {
    convergedOnV1();
    String first = revisionNames().get(0);

    parent("v2", 2);
    syncOnce();
    assertThat(calls).as("latest and the revision still claiming children").containsExactlyInAnyOrder("v2", "v1");
    assertThat(writes()).filteredOn(write -> write.contains("configmaps"))
        .containsExactly("update configmaps team/c0");
    assertThat(version("c0")).isEqualTo("v2");
    assertThat(lastStatus()).contains("\"reason\":\"RolloutProgressing\"", "updating ConfigMap c0");

    refresh();
    ready("c0", false); // the updated child is not ready yet
    syncOnce();
    assertThat(writes()).as("nothing moves while c0 is not ready").noneMatch(write -> write.contains("configmaps"))
        .noneMatch(write -> write.contains("controllerrevisions"));
    assertThat(lastStatus()).contains("\"reason\":\"RolloutWaiting\"", "child ConfigMap c0 failed status check");

    ready("c0", true);
    syncOnce();
    assertThat(writes()).filteredOn(write -> write.contains("configmaps"))
        .containsExactly("update configmaps team/c1");
    refresh();
    syncOnce();
    assertThat(writes()).filteredOn(write -> write.contains("configmaps"))
        .containsExactly("update configmaps team/c2");
    assertThat(writes()).as("the old revision claims nothing more")
        .contains("delete controllerrevisions team/" + first);
    refresh();
    syncOnce();
    assertThat(List.of(version("c0"), version("c1"), version("c2"))).containsOnly("v2");
    assertThat(lastStatus()).contains("\"reason\":\"OnLatestRevision\"");
    refresh();
    assertThat(revisionNames()).hasSize(1).doesNotContain(first);

    syncOnce();
    assertThat(writes()).as("a finished rollout writes nothing").isEmpty();
    assertThat(calls).containsExactly("v2");
  }

  @Test
  void aLatestAnswerTheDeleteGuardRefusesWritesNoRevisionAndNoChild() {
    convergedOnV1();
    List<String> revisionsBefore = revisionNames();
    onlyC0For = "v2";

    parent("v2", 2);
    assertThatThrownBy(this::syncOnce).isInstanceOf(HookResponseException.class)
        .hasMessageContaining("would delete 2 of the 3 observed children at once");

    assertThat(writes()).as("no revision made for v2, no claim moved, no child touched, no status").isEmpty();
    assertThat(revisionNames()).isEqualTo(revisionsBefore);
  }

  @Test
  void aSyncOnAStaleRevisionCacheBelievesTheRevisionsItWrote() {
    convergedOnV1();
    parent("v2", 2);
    syncOnce(); // c0 moves; the revisions and c0 are written, the caches do not show it yet

    syncOnce();

    assertThat(writes()).as("no child but c0 is touched, and no revision is written again")
        .filteredOn(write -> !write.startsWith("patch-status")).containsExactly("update configmaps team/c0");
    assertThat(version("c0")).isEqualTo("v2");
    assertThat(lastStatus()).contains("\"reason\":\"RolloutWaiting\"", "child ConfigMap c0 is not updated yet");
  }

  @Test
  void deleteParentTheControllerDoesNotAllowIsRefusedBeforeAnyRevisionOrChildIsWritten() {
    parent("v1", 1);
    deleteParent = true;

    assertThatThrownBy(this::syncOnce).hasMessageContaining("deleteParent: true needs the annotation");
    assertThat(writes()).isEmpty();
  }
}
