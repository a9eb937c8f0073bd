package dev.metareactor.engine.shard;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * Where a sharded controller's parent is synced ({@link #place}): moved from this replica to the shard that owns it
 * now, inside a sync of that parent (the work queue runs one sync of a key at a time, so the parent's hook is not
 * being called meanwhile, and this replica never calls it for the parent again: its informer drops the parent once
 * the label says another shard); held back while this replica's caches lack owned objects that moved with it
 * ({@link Handover}); else synced here.
 *
 * <p>Order matters for the new owner: the parent's owned objects are relabelled first, the parent last, with the
 * versions those relabels got in the parent's {@link Handover} annotation, so that the new owner syncs the parent
 * only once its informers have the owned objects. The parent's label is written with its resourceVersion: if the
 * parent changed meanwhile, the write fails with a conflict and the sync runs again (its owned objects already moved
 * are not moved twice, and the versions they got are remembered for the parent's write).
 */
public final class ShardMover {

  private static final Logger LOG = LoggerFactory.getLogger(ShardMover.class);
  /** Owned objects relabelled at once during one move. */
  private static final int IN_PARALLEL = 8;
  /** How long the versions of a move whose parent write failed are kept for the next attempt. */
  private static final Duration RETRY_MEMORY = Duration.ofMinutes(10);

  private final ObjectApi api;
  private final Membership membership;
  private final String ownerLabel;
  private final List<InformerLease> owned;
  private final Handover handover;
  /**
   * By parent UID, the versions its owned objects got in a move whose parent write has not succeeded yet: those
   * objects left this replica's caches, so the next attempt cannot find them again.
   */
  private final Cache<String, Map<String, String>> unfinished = Caches.newBuilder()
      .expireAfterWrite(RETRY_MEMORY).build();
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
    this(api, membership, ownerLabel, owned, meters, kind, controller, System::nanoTime);
  }

  /** @param nanoTime the clock of {@link Handover#WAIT_AT_MOST} */
  public ShardMover(ObjectApi api, Membership membership, String ownerLabel, List<InformerLease> owned,
      MeterRegistry meters, String kind, String controller, LongSupplier nanoTime) {
    this.api = Objects.requireNonNull(api, "api");
    this.membership = Objects.requireNonNull(membership, "membership");
    this.ownerLabel = Objects.requireNonNull(ownerLabel, "ownerLabel");
    this.owned = List.copyOf(owned);
    this.handover = new Handover(ownerLabel, owned, nanoTime);
    this.moves = MetricCatalogue.SHARD_MOVES.counter().tag("controller", controller).tag("kind", kind)
        .register(meters);
    this.handovers = MetricCatalogue.SHARD_HANDOVER.timer().tag("controller", controller).tag("kind", kind)
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

  /**
   * Where {@code parent} is synced: empty to sync it here; else what to do instead — its move, when another shard
   * owns it now, or a failure with {@link Handover.LaggingException} while this replica's caches lack owned objects
   * that moved with it (sync it again shortly).
   */
  public Optional<Mono<Void>> place(ApiResource resource, KubeObject parent) {
    String destination = destination(parent);
    if (destination != null) {
      return Optional.of(move(resource, parent, destination));
    }
    return handover.lagging(parent).map(lag -> Mono.error(new Handover.LaggingException(lag)));
  }

  /**
   * Relabels the parent's owned objects, then the parent, with {@code shard}, recording on the parent the versions
   * its owned objects got ({@link Handover}).
   */
  public Mono<Void> move(ApiResource resource, KubeObject parent, String shard) {
    String uid = parent.storedUid();
    // Kept until the parent's write succeeds: a failure on the way leaves what moved so far for the next attempt.
    Map<String, String> versions = unfinished.get(uid, key -> new ConcurrentHashMap<>());
    List<Mono<Void>> relabels = new ArrayList<>();
    for (InformerLease informer : owned) {
      for (KubeObject child : informer.controlledBy(uid)) {
        if (!shard.equals(child.labels().get(ownerLabel))) {
          relabels.add(relabel(informer.resource(), child, labelPatch(ownerLabel, shard, null))
              .doOnNext(moved -> Handover.record(versions, informer.resource(), moved.resourceVersion()))
              .then());
        }
      }
    }
    return Flux.fromIterable(relabels).flatMap(write -> write, IN_PARALLEL)
        .then(Mono.defer(() ->
            relabel(resource, parent, handoverPatch(ownerLabel, shard, parent.resourceVersion(), versions))))
        .doOnSuccess(done -> {
          unfinished.invalidate(uid);
          moves.increment();
          handovers.record(Duration.ofNanos(System.nanoTime() - membershipChangedAt));
          LOG.debug("{} moved to shard {} with {} owned objects", parent.describe(), shard, relabels.size());
        })
        .then();
  }

  /** A merge patch; completes with the object as written, or empty when it is gone (it moved with its parent). */
  private Mono<KubeObject> relabel(ApiResource resource, KubeObject object, ObjectNode patch) {
    return api.mergePatch(resource, object.namespace(), object.name(), patch)
        .map(ObjectApi.Written::object)
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty());
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

  /**
   * The {@link #labelPatch} of a parent handed to {@code shard}, with the {@link Handover} annotation of the versions
   * its owned objects got (empty when none moved with it); {@code versions} {@code null} for a parent given its first
   * owner, whose annotation is removed (it did not move: {@link ShardParticipant#mark}).
   */
  static ObjectNode handoverPatch(String label, String shard, @Nullable String resourceVersion,
      @Nullable Map<String, String> versions) {
    ObjectNode patch = labelPatch(label, shard, resourceVersion);
    ObjectNode annotations = ((ObjectNode) patch.get("metadata")).putObject("annotations");
    if (versions == null) {
      annotations.putNull(label);
    } else {
      annotations.put(label, Handover.annotationValue(versions));
    }
    return patch;
  }
}
