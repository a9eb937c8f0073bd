package dev.metareactor.engine.shard;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * Moves a sharded controller's parent from this replica to the shard that owns it now, inside a sync of that parent:
 * the work queue runs one sync of a key at a time, so the parent's hook is not being called meanwhile, and this
 * replica never calls it for the parent again (its informer drops the parent once the label says another shard).
 *
 * <p>Order matters for the new owner: the parent's owned objects are relabelled first, the parent last, so that the
 * new owner's informers have the owned objects by the time they bring the parent. The parent's label is written
 * with its resourceVersion: if the parent changed meanwhile, the write fails with a conflict and the sync runs
 * again (its owned objects already moved are not moved twice).
 */
public final class ShardMover {

  private static final Logger LOG = LoggerFactory.getLogger(ShardMover.class);
  /** Owned objects relabelled at once during one move. */
  private static final int IN_PARALLEL = 8;

  private final ObjectApi api;
  private final Membership membership;
  private final String ownerLabel;
  private final List<InformerLease> owned;
  private final Counter moves;
  private final Timer handovers;
  private volatile long membershipChangedAt = System.nanoTime();

  /**
   * @param owned the informers of the controller's owned objects (children, attachments, outputs, revisions)
   * @param kind the controller object's kind, for the metrics' tags
   * @param controller the controller object's name, for the metrics' tags
   */
  public ShardMover(ObjectApi api, Membership membership, String ownerLabel, List<InformerLease> owned,
      MeterRegistry meters, String kind, String controller) {
    this.api = Objects.requireNonNull(api, "api");
    this.membership = Objects.requireNonNull(membership, "membership");
    this.ownerLabel = Objects.requireNonNull(ownerLabel, "ownerLabel");
    this.owned = List.copyOf(owned);
    this.moves = Counter.builder("metareactor.shard.moves").tag("controller", controller).tag("kind", kind)
        .description("Parents this replica handed to another shard").register(meters);
    this.handovers = Timer.builder("metareactor.shard.handover").tag("controller", controller).tag("kind", kind)
        .description("From the membership change that moved a parent to its label written by its former owner")
        .publishPercentileHistogram(false)
        .serviceLevelObjectives(Duration.ofMillis(100), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofSeconds(5), Duration.ofSeconds(15), Duration.ofSeconds(60))
        .register(meters);
  }

  /** Notes when the membership changed, for the handover latency. */
  public void membershipChanged() {
    membershipChangedAt = System.nanoTime();
  }

  /** The shard {@code parent} must move to, or {@code null} when it stays here. */
  public @Nullable String destination(KubeObject parent) {
    String owner = membership.owner(parent.storedUid());
    return owner.equals(membership.self()) ? null : owner;
  }

  /** Relabels the parent's owned objects, then the parent, with {@code shard}. */
  public Mono<Void> move(ApiResource resource, KubeObject parent, String shard) {
    List<Mono<Void>> relabels = new ArrayList<>();
    for (InformerLease informer : owned) {
      for (KubeObject child : informer.controlledBy(parent.storedUid())) {
        if (!shard.equals(child.labels().get(ownerLabel))) {
          relabels.add(relabel(informer.resource(), child, shard, null));
        }
      }
    }
    return Flux.fromIterable(relabels).flatMap(write -> write, IN_PARALLEL).then(
        relabel(resource, parent, shard, parent.resourceVersion()))
        .doOnSuccess(done -> {
          moves.increment();
          handovers.record(Duration.ofNanos(System.nanoTime() - membershipChangedAt));
          LOG.debug("{} moved to shard {} with {} owned objects", parent.describe(), shard, relabels.size());
        });
  }

  /** A merge patch of the owner label, guarded by {@code resourceVersion} when given; an object gone is moved. */
  private Mono<Void> relabel(ApiResource resource, KubeObject object, String shard,
      @Nullable String resourceVersion) {
    return api.mergePatch(resource, object.namespace(), object.name(), labelPatch(ownerLabel, shard, resourceVersion))
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty())
        .then();
  }

  /** {@code {"metadata": {"labels": {label: value}}}}, with the resourceVersion when given. */
  static ObjectNode labelPatch(String label, String value, @Nullable String resourceVersion) {
    ObjectNode patch = KubeJson.nodes().objectNode();
    ObjectNode metadata = patch.putObject("metadata");
    if (resourceVersion != null) {
      metadata.put("resourceVersion", resourceVersion);
    }
    metadata.set("labels", KubeJson.mapper().valueToTree(Map.of(label, value)));
    return patch;
  }
}
