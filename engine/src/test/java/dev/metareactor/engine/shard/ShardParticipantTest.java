package dev.metareactor.engine.shard;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A hosted controller's part in sharding, in one class: the informers of its share, the owner label on what it
 * writes, where a parent is synced, and what joining the shards registers (the sharder, the membership, the gauge),
 * ended as one; and without {@code --sharding}, none of it.
 */
class ShardParticipantTest {

  private static final ApiResource PARENTS = new ApiResource("example.com", "v1", "things", "Thing", true, Set.of());
  private static final ApiResource CHILDREN = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource LEASES =
      new ApiResource("coordination.k8s.io", "v1", "leases", "Lease", true, Set.of());
  private static final String LABEL = ShardKeys.ownerLabel("CompositeController", "things");

  private final AtomicLong now = new AtomicLong();
  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final Membership membership = new Membership("a", Duration.ofSeconds(15), now::get);

  private ShardParticipant participant(Sharding sharding) {
    return new ShardParticipant(sharding, informers, api, meters, "CompositeController", "things", now::get);
  }

  private void live(String shard) {
    membership.observe(object(LEASES, "ns", "lease-" + shard).label(ShardKeys.SHARD, shard)
        .field("spec", "{\"holderIdentity\":\"" + shard + "_1\",\"renewTime\":\"t\"}").build());
  }

  /** A parent whose UID {@code shard} owns among {@code shards}. */
  private static KubeObject parentOwnedBy(String shard, List<String> shards) {
    for (int i = 0; ; i++) {
      if (shard.equals(Rendezvous.owner("uid-" + i, shards))) {
        return object(PARENTS, "ns", "p-" + i).uid("uid-" + i).label(LABEL, "a").build();
      }
    }
  }

  /**
   * An object that appears in this replica's share carrying the annotation its mover writes moved here: its event
   * says so, and so the sync it causes is kept as a move (ShardingIT shows it on the real control plane); a new
   * object, an update, and anything without {@code --sharding} are left as they are.
   */
  @Test
  void anObjectThatAppearsWithItsMoversAnnotationMovedHere() {
    ShardAssigner assigner = new ShardAssigner(api, informers, membership, shard -> Mono.just(false), Duration.ZERO,
        Schedulers.immediate(), meters);
    ShardParticipant participant = participant(Sharding.of(membership, assigner));
    KubeObject moved = object(PARENTS, "ns", "p").uid("u").label(LABEL, "a").annotation(LABEL, "").build();
    KubeObject created = object(PARENTS, "ns", "q").uid("v").label(LABEL, "a").build();

    assertThat(participant.mark(new ObjectEvent(ObjectEvent.Type.ADDED, null, moved)).trigger())
        .isEqualTo(Trigger.of(Trigger.Cause.SHARD_MOVE));
    assertThat(participant.mark(new ObjectEvent(ObjectEvent.Type.ADDED, null, created)).trigger())
        .isEqualTo(Trigger.of(Trigger.Cause.CREATED));
    assertThat(participant.mark(new ObjectEvent(ObjectEvent.Type.UPDATED, moved, moved)).origin())
        .isEqualTo(ObjectEvent.Origin.UNKNOWN);
    assertThat(participant(Sharding.disabled()).mark(new ObjectEvent(ObjectEvent.Type.ADDED, null, moved)).trigger())
        .isEqualTo(Trigger.of(Trigger.Cause.CREATED));
    assigner.close();
  }

  @Test
  void withShardingItTakesTheSharesInformersLabelsWhatItWritesAndMovesWhatIsAnotherShards() {
    live("b");
    ShardAssigner assigner = new ShardAssigner(api, informers, membership, shard -> Mono.just(false), Duration.ZERO,
        Schedulers.immediate(), meters);
    ShardParticipant participant = participant(Sharding.of(membership, assigner));

    participant.acquireSynced(PARENTS);
    participant.acquireOwned(CHILDREN);
    assertThat(informers.held()).containsOnlyKeys(PARENTS + " (" + LABEL + "=a)", CHILDREN + " (" + LABEL + "=a)");
    assertThat(participant.ownLabels()).isEqualTo(Map.of(LABEL, "a"));
    assertThat(participant.place(PARENTS, parentOwnedBy("b", List.of("a", "b"))))
        .as("before joining nothing moves").isEmpty();

    List<Predicate<KubeObject>> syncedAgain = new ArrayList<>();
    AtomicInteger share = new AtomicInteger(3);
    // The gauge's supplier is held by nothing but the gauge, as a controller's is: it must outlive a collection.
    Disposable joined = participant.join(List.of(new ShardedController.Synced(PARENTS, parent -> true)),
        syncedAgain::add, share::get);
    System.gc();
    assertThat(meters.get(MetricCatalogue.SHARD_PARENTS.name()).tag("controller", "things").gauge().value())
        .isEqualTo(3);
    assertThat(participant.place(PARENTS, parentOwnedBy("b", List.of("a", "b")))).as("a move").isPresent();
    assertThat(participant.place(PARENTS, parentOwnedBy("a", List.of("a", "b")))).as("synced here").isEmpty();

    live("c");
    assertThat(syncedAgain).as("a membership change syncs the parents that move").hasSize(1);
    assertThat(syncedAgain.get(0).test(parentOwnedBy("c", List.of("a", "b", "c")))).isTrue();
    assertThat(syncedAgain.get(0).test(parentOwnedBy("a", List.of("a", "b", "c")))).isFalse();

    joined.dispose();
    assertThat(meters.find(MetricCatalogue.SHARD_PARENTS.name()).gauge())
        .as("the gauge, once the controller stopped").isNull();
    live("d");
    assertThat(syncedAgain).as("membership changes after the controller stopped").hasSize(1);
    assigner.close();
  }

  @Test
  void withoutShardingItTakesWholeInformersLabelsNothingAndSyncsEveryParentHere() {
    ShardParticipant participant = participant(Sharding.disabled());

    participant.acquireSynced(PARENTS);
    participant.acquireOwned(CHILDREN);
    assertThat(informers.held()).containsOnlyKeys(PARENTS.toString(), CHILDREN.toString());
    assertThat(participant.ownLabels()).isEmpty();

    List<Predicate<KubeObject>> syncedAgain = new ArrayList<>();
    participant.join(List.of(new ShardedController.Synced(PARENTS, parent -> true)), syncedAgain::add, () -> 3);
    assertThat(meters.getMeters()).isEmpty();
    assertThat(participant.place(PARENTS, parentOwnedBy("b", List.of("a", "b")))).isEmpty();
  }
}
