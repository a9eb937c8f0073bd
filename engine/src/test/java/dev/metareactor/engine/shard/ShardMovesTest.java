package dev.metareactor.engine.shard;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.RecordingApi;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.JsonNode;

/**
 * Moves of parents between shards, with the requests they make: the owner's move of a parent another shard now
 * owns ({@link ShardMover}), and the sharder's assignment and takeover ({@link ShardAssigner}).
 */
class ShardMovesTest {

  private static final ApiResource PARENTS = new ApiResource("example.com", "v1", "things", "Thing", true, Set.of());
  private static final ApiResource CHILDREN = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final String LABEL = ShardKeys.ownerLabel("CompositeController", "things");

  private final AtomicLong now = new AtomicLong();
  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();

  private Membership membership(String self, String... others) {
    Membership membership = new Membership(self, Duration.ofSeconds(15), now::get);
    for (String other : others) {
      KubeObject lease = object(new ApiResource("coordination.k8s.io", "v1", "leases", "Lease", true, Set.of()),
          "ns", "lease-" + other).label(ShardKeys.SHARD, other).field("spec", "{\"holderIdentity\":\"" + other
          + "_1\",\"renewTime\":\"t\"}").build();
      membership.observe(lease);
    }
    return membership;
  }

  /** A UID that {@code shard} owns among {@code shards}. */
  private static String uidOwnedBy(String shard, List<String> shards) {
    for (int i = 0; ; i++) {
      if (shard.equals(Rendezvous.owner("uid-" + i, shards))) {
        return "uid-" + i;
      }
    }
  }

  private static JsonNode body(RecordingApi.Action action) {
    return KubeJson.mapper().readTree(action.body());
  }

  @Test
  void theOwnerMovesAParentOtherShardOwnsNowOwnedObjectsFirstThenTheParentGuardedByItsVersion() {
    Membership membership = membership("a", "b");
    String uid = uidOwnedBy("b", List.of("a", "b"));
    KubeObject parent = object(PARENTS, "ns", "p").uid(uid).resourceVersion("41").label(LABEL, "a").build();
    KubeObject child = object(CHILDREN, "ns", "p-1").controlledBy(parent).label(LABEL, "a").build();
    informers.of(CHILDREN).put(child);
    api.holding(PARENTS, parent).holding(CHILDREN, child);
    ShardMover mover = new ShardMover(api, membership, LABEL, List.of(informers.of(CHILDREN)),
        new SimpleMeterRegistry(), "CompositeController", "things");

    assertThat(mover.destination(parent)).isEqualTo("b");
    mover.move(PARENTS, parent, "b").block();

    assertThat(api.actions()).extracting(Object::toString)
        .containsExactly("patch configmaps ns/p-1", "patch things ns/p");
    assertThat(body(api.actions().get(0)).at("/metadata/labels")).isEqualTo(
        KubeJson.mapper().createObjectNode().put(LABEL, "b"));
    assertThat(body(api.actions().get(1)).at("/metadata/resourceVersion").asString()).isEqualTo("41");
    assertThat(body(api.actions().get(1)).at("/metadata/annotations/" + LABEL.replace("/", "~1")).asString())
        .as("the version the child got, for the new owner's caches").isEqualTo("configmaps="
            + api.object(CHILDREN, "ns", "p-1").orElseThrow().resourceVersion());
    KubeObject own = object(PARENTS, "ns", "q").uid(uidOwnedBy("a", List.of("a", "b"))).build();
    assertThat(mover.destination(own)).isNull();
  }

  @Test
  void aShardThatRenewedAfterAllKeepsItsParents() {
    Membership membership = membership("a");
    KubeObject parent = object(PARENTS, "ns", "p").uid(uidOwnedBy("a", List.of("a"))).label(LABEL, "slow").build();
    KubeObject child = object(CHILDREN, "ns", "p-1").controlledBy(parent).label(LABEL, "slow").build();
    api.holding(PARENTS, parent).holding(CHILDREN, child);
    ShardAssigner assigner = new ShardAssigner(api, informers, membership,
        shard -> reactor.core.publisher.Mono.just(false), Duration.ZERO, Schedulers.immediate(),
        new SimpleMeterRegistry());
    assigner.register(new ShardedController("CompositeController", "things", LABEL,
        List.of(new ShardedController.Synced(PARENTS, object -> true)), List.of(CHILDREN)));

    assigner.lead();

    assertThat(api.actions()).filteredOn(action -> action.verb().equals("patch")).isEmpty();
    assigner.close();
  }

  @Test
  void theSharderAssignsUnassignedParentsAndMovesWhatADeadShardHadChildrenFirst() {
    Membership membership = membership("a");
    String moving = uidOwnedBy("a", List.of("a"));
    KubeObject dead = object(PARENTS, "ns", "orphaned").uid(moving).label(LABEL, "gone").build();
    KubeObject deadChild = object(CHILDREN, "ns", "orphaned-1").controlledBy(dead).label(LABEL, "gone").build();
    KubeObject unassigned = object(PARENTS, "ns", "new").uid("uid-new").build();
    KubeObject stranger = object(CHILDREN, "ns", "not-ours").label(LABEL, "gone").build();
    api.holding(PARENTS, dead).holding(CHILDREN, deadChild).holding(PARENTS, unassigned)
        .holding(CHILDREN, stranger);
    List<String> ended = new java.util.ArrayList<>();
    ShardAssigner assigner = new ShardAssigner(api, informers, membership, shard -> {
      ended.add(shard);
      return reactor.core.publisher.Mono.just(true);
    }, Duration.ZERO, Schedulers.immediate(), new SimpleMeterRegistry());
    assigner.register(new ShardedController("CompositeController", "things", LABEL,
        List.of(new ShardedController.Synced(PARENTS, parent -> true)), List.of(CHILDREN)));

    assigner.lead();

    List<String> writes = api.actions().stream().filter(action -> action.verb().equals("patch"))
        .map(Object::toString).toList();
    assertThat(writes).as("the child before its parent; the object controlled by none is left")
        .containsExactly("patch configmaps ns/orphaned-1", "patch things ns/orphaned", "patch things ns/new");
    assertThat(api.actions()).filteredOn(action -> action.verb().equals("list")).extracting(action -> action.body())
        .contains(LABEL + "," + LABEL + " notin (a)", "!" + LABEL);
    assertThat(ended).as("the dead shard is ended before its parents move").containsExactly("gone");
    List<RecordingApi.Action> patches = api.actions().stream().filter(action -> action.verb().equals("patch"))
        .toList();
    String annotation = "/metadata/annotations/" + LABEL.replace("/", "~1");
    assertThat(body(patches.get(1)).at(annotation).asString()).as("the version its child got, for the new owner")
        .isEqualTo("configmaps=" + api.object(CHILDREN, "ns", "orphaned-1").orElseThrow().resourceVersion());
    assertThat(body(patches.get(2)).at(annotation).isNull()).as("nothing moved with it").isTrue();

    // A parent created later, from the watch of unassigned ones.
    api.clearActions();
    KubeObject later = object(PARENTS, "ns", "later").uid("uid-later").build();
    informers.of(PARENTS).deliver(new ObjectEvent(ObjectEvent.Type.ADDED, null, later));
    assertThat(api.actions()).extracting(Object::toString).containsExactly("patch things ns/later");
    assertThat(body(api.actions().get(0)).at("/metadata/labels/" + LABEL.replace("/", "~1")).asString())
        .isEqualTo("a");
    assigner.close();
  }

  /**
   * An owned object that turns up without the owner label while the sharder leads (created by hand with a
   * ControllerRef, or by a replica without sharding) is in no replica's cache; the sharder's periodic sweep labels it
   * for its parent's shard, not only the sweep when it starts leading.
   */
  @Test
  void theSharderSweepsForUnlabelledOwnedObjectsPeriodicallyNotOnlyWhenItStartsLeading() {
    Membership membership = membership("a");
    KubeObject parent = object(PARENTS, "ns", "p").uid(uidOwnedBy("a", List.of("a"))).label(LABEL, "a").build();
    api.holding(PARENTS, parent);
    VirtualTimeScheduler time = VirtualTimeScheduler.create();
    ShardAssigner assigner = new ShardAssigner(api, informers, membership, shard -> Mono.just(true), Duration.ZERO,
        time, new SimpleMeterRegistry());
    assigner.register(new ShardedController("CompositeController", "things", LABEL,
        List.of(new ShardedController.Synced(PARENTS, object -> true)), List.of(CHILDREN)));
    assigner.lead();
    assertThat(api.actions()).filteredOn(action -> action.verb().equals("patch")).isEmpty();

    KubeObject stray = object(CHILDREN, "ns", "p-by-hand").controlledBy(parent).build();
    api.holding(CHILDREN, stray);
    time.advanceTimeBy(Duration.ofMinutes(5));

    assertThat(api.actions()).filteredOn(action -> action.verb().equals("patch")).extracting(Object::toString)
        .containsExactly("patch configmaps ns/p-by-hand");
    assertThat(body(api.actions().get(api.actions().size() - 1)).at("/metadata/labels/" + LABEL.replace("/", "~1"))
        .asString()).isEqualTo("a");
    assigner.close();
    time.dispose();
  }
}
