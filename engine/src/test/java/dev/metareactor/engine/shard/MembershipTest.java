package dev.metareactor.engine.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** Which shards are live, on a clock the test moves. */
class MembershipTest {

  private final AtomicLong now = new AtomicLong();
  private final Membership membership = new Membership("a", Duration.ofSeconds(15), now::get);
  private final List<List<String>> changes = new CopyOnWriteArrayList<>();

  {
    membership.changes().subscribe(changes::add);
  }

  private static KubeObject lease(String shard, String holder, String renewTime) {
    ObjectNode lease = KubeJson.nodes().objectNode().put("apiVersion", "coordination.k8s.io/v1").put("kind", "Lease");
    lease.putObject("metadata").put("name", "metacontroller-shard-" + shard).put("namespace", "ns")
        .putObject("labels").put(ShardKeys.SHARD, shard).put(ShardKeys.INSTALLATION, "metacontroller");
    lease.putObject("spec").put("holderIdentity", holder).put("leaseDurationSeconds", 15)
        .put("renewTime", renewTime);
    return KubeObject.of(lease);
  }

  private void advance(Duration by) {
    now.addAndGet(by.toNanos());
    membership.tick();
  }

  @Test
  void aloneItKnowsOnlyItselfAndOwnsEverything() {
    assertThat(membership.live()).containsExactly("a");
    assertThat(membership.owner("any-uid")).isEqualTo("a");
  }

  @Test
  void aShardIsLiveWhileItsLeaseIsRenewedWithinItsDuration() {
    membership.observe(lease("b", "pod-b_1", "t1"));
    assertThat(membership.live()).containsExactly("a", "b");
    advance(Duration.ofSeconds(10));
    membership.observe(lease("b", "pod-b_1", "t2")); // renewed: the clock starts again
    advance(Duration.ofSeconds(10));
    assertThat(membership.isLive("b")).isTrue();
    membership.observe(lease("b", "pod-b_1", "t2")); // the same lease again (a resync) is no renewal
    advance(Duration.ofSeconds(6));
    assertThat(membership.live()).containsExactly("a");
    assertThat(changes).containsExactly(List.of("a", "b"), List.of("a"));
  }

  @Test
  void aReleasedOrDeletedLeaseEndsItsShardAtOnce() {
    membership.observe(lease("b", "pod-b_1", "t1"));
    membership.observe(lease("c", "pod-c_1", "t1"));
    membership.observe(lease("b", "", "t2"));
    assertThat(membership.live()).containsExactly("a", "c");
    membership.forget(lease("c", "pod-c_1", "t1"));
    assertThat(membership.live()).containsExactly("a");
  }

  @Test
  void itsOwnShardStaysLiveWhateverItsLeaseLooksLike() {
    membership.observe(lease("a", "", "t1"));
    advance(Duration.ofMinutes(1));
    assertThat(membership.live()).containsExactly("a");
  }
}
