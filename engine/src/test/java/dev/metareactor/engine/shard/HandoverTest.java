package dev.metareactor.engine.shard;

import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.controller.composite.CompositeSyncFixture;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ForwardingObjectApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.RecordingApi;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A parent handed to this replica is synced only once its owned-object informers have caught up to the versions the
 * move recorded on it ({@link Handover}): never with the objects that moved with it missing.
 */
class HandoverTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource PARENTS = new ApiResource("example.com", "v1", "things", "Thing", true, Set.of());
  private static final String LABEL = ShardKeys.ownerLabel("CompositeController", "things");

  private final AtomicLong now = new AtomicLong();

  private KubeObject handedOver(String versions) {
    return object(PARENTS, "ns", "p").label(LABEL, "b").annotation(LABEL, versions).build();
  }

  @Test
  void aParentWaitsUntilEveryOwnedInformerHasCaughtUpToItsResourcesVersion() {
    FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS).caughtUpTo("19");
    FakeInformerLease secrets = new FakeInformerLease(new ApiResource("", "v1", "secrets", "Secret", true, Set.of()))
        .caughtUpTo("7");
    Handover handover = new Handover(LABEL, List.of(configMaps, secrets), now::get);
    KubeObject parent = handedOver("configmaps=20,secrets=5");

    assertThat(handover.lagging(parent)).hasValueSatisfying(lag -> assertThat(lag)
        .contains("configmaps/v1 is at resourceVersion 19", "at 20"));
    configMaps.caughtUpTo("20");
    assertThat(handover.lagging(parent)).isEmpty();
    assertThat(handover.lagging(object(PARENTS, "ns", "q").label(LABEL, "b").build()))
        .as("a parent without the annotation").isEmpty();
    assertThat(handover.lagging(handedOver("deployments.apps=99"))).as("a resource this controller does not own")
        .isEmpty();
    assertThat(handover.lagging(handedOver("configmaps=not-a-number"))).as("a version that is no integer").isEmpty();
  }

  @Test
  void aParentWaitsAMinuteAtMostThenIsSyncedAnyway() {
    FakeInformerLease configMaps = new FakeInformerLease(CONFIG_MAPS).caughtUpTo("10");
    Handover handover = new Handover(LABEL, List.of(configMaps), now::get);
    KubeObject parent = handedOver("configmaps=900");

    assertThat(handover.lagging(parent)).isPresent();
    now.addAndGet(Handover.WAIT_AT_MOST.minusSeconds(1).toNanos());
    assertThat(handover.lagging(parent)).isPresent();
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    assertThat(handover.lagging(parent)).as("an annotation no cache here reaches (restored from another cluster)")
        .isEmpty();
  }

  @Test
  void theAnnotationRecordsTheHighestVersionOfEachResourceInOrder() {
    Map<String, String> versions = new java.util.HashMap<>();
    Handover.record(versions, CONFIG_MAPS, "12");
    Handover.record(versions, CONFIG_MAPS, "9");
    Handover.record(versions, new ApiResource("apps", "v1", "deployments", "Deployment", true, Set.of()), "30");
    Handover.record(versions, CONFIG_MAPS, null);

    assertThat(Handover.annotationValue(versions)).isEqualTo("configmaps=12,deployments.apps=30");
    assertThat(Handover.versions("configmaps=12,deployments.apps=30,garbage,=1"))
        .containsExactly(Map.entry("configmaps", "12"), Map.entry("deployments.apps", "30"));
    assertThat(Handover.annotationValue(Map.of())).isEmpty();
  }

  /**
   * The former owner relabels the children, then the parent with the versions they got; when the parent's write
   * conflicts (it changed meanwhile), the next attempt no longer sees the children (they left its cache) but still
   * records their versions.
   */
  @Test
  void theMoverRecordsTheChildrensVersionsOnTheParentAcrossARetriedMove() {
    KubeObject parent = object(PARENTS, "ns", "p").uid("uid-p").resourceVersion("41").label(LABEL, "a").build();
    KubeObject child = object(CONFIG_MAPS, "ns", "p-1").resourceVersion("30").controlledBy(parent).label(LABEL, "a")
        .build();
    FakeInformerLease children = new FakeInformerLease(CONFIG_MAPS).put(child);
    RecordingApi recorded = new RecordingApi().holding(PARENTS, parent).holding(CONFIG_MAPS, child);
    AtomicBoolean conflictOnce = new AtomicBoolean(true);
    List<JsonNode> parentPatches = new CopyOnWriteArrayList<>();
    ObjectApi api = new ForwardingObjectApi(recorded) {
      @Override
      public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
        if (resource.equals(PARENTS)) {
          parentPatches.add(body);
          if (conflictOnce.getAndSet(false)) {
            return Mono.error(new ApiException(409, "Conflict", "the object has been modified", null));
          }
        }
        return super.patch(resource, namespace, name, type, body);
      }
    };
    ShardMover mover = new ShardMover(api, new Membership("a", Duration.ofSeconds(15), now::get), LABEL,
        List.of(children), new SimpleMeterRegistry(), "CompositeController", "things", now::get);

    assertThatThrownBy(() -> mover.move(PARENTS, parent, "b").block()).hasMessageContaining("modified");
    String childVersion = recorded.object(CONFIG_MAPS, "ns", "p-1").orElseThrow().resourceVersion();
    children.deliver(new ObjectEvent(ObjectEvent.Type.DELETED, null, child)); // labelled b: gone from a's cache
    mover.move(PARENTS, parent, "b").block();

    assertThat(parentPatches).hasSize(2).allSatisfy(patch -> assertThat(
        patch.at("/metadata/annotations/" + LABEL.replace("/", "~1")).asString())
        .isEqualTo("configmaps=" + childVersion));
    assertThat(recorded.actions()).filteredOn(action -> action.resource().equals("configmaps")).hasSize(1);
  }

  /**
   * The middle tier: a CompositeController's sync of a parent just handed to this replica, whose children informer
   * has not yet received the child that moved with it. No hook call and no write (with the hook shown no children,
   * the engine would create the child again) until the child's event arrives; then one sync that sees it.
   */
  @Test
  void aParentHandedOverWhileItsChildInformerLagsIsNotSyncedUntilItCatchesUp() {
    List<JsonNode> requests = new CopyOnWriteArrayList<>();
    ShardMover[] mover = new ShardMover[1];
    CompositeSyncFixture fixture = new CompositeSyncFixture((request, root) -> {
      requests.add(KubeJson.mapper().readTree(request.toString())); // its objects are raw JSON: read them
      return Mono.just(KubeJson.mapper().readTree("""
          {"status": {}, "children": [{"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "child", "namespace": "team"}, "data": {"value": "one"}}]}"""));
    }, object -> mover[0].place(object.resource(), object.object()));
    mover[0] = new ShardMover(fixture.api(), new Membership("b", Duration.ofSeconds(15), now::get), LABEL,
        List.of(fixture.configMaps()), new SimpleMeterRegistry(), "CompositeController", "things", now::get);
    KubeObject parent = fixture.parent("p", "parent-uid", "{}", "{\"observedGeneration\": 1}");
    KubeObject child = fixture.childAsCreated(parent, (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "child", "namespace": "team"},
         "data": {"value": "one"}}"""));
    // The child left the cache as it is before its relabel arrives; the parent came with the move's annotation.
    fixture.configMaps().deliver(new ObjectEvent(ObjectEvent.Type.DELETED, null, child));
    fixture.configMaps().caughtUpTo("15");
    KubeObject moved = nextVersionOf(child).resourceVersion("20").label(LABEL, "b").build();
    fixture.parents().put(nextVersionOf(parent).resourceVersion("21").label(LABEL, "b")
        .annotation(LABEL, "configmaps=20").build());

    assertThatThrownBy(() -> fixture.sync("p")).isInstanceOf(Handover.LaggingException.class)
        .hasMessageContaining("at resourceVersion 15");
    assertThat(requests).as("no hook call while the child is missing").isEmpty();
    assertThat(fixture.api().actions()).as("nothing written").isEmpty();

    fixture.configMaps().deliver(new ObjectEvent(ObjectEvent.Type.ADDED, null, moved));
    fixture.sync("p");

    assertThat(requests).hasSize(1);
    assertThat(requests.get(0).path("children").path("ConfigMap.v1").path("child").path("metadata")
        .path("resourceVersion").asString()).as("the hook is shown the child that moved").isEqualTo("20");
    assertThat(fixture.api().actions()).extracting(RecordingApi.Action::verb).doesNotContain("create");
  }
}
