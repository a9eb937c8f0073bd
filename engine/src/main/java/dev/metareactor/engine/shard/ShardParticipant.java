package dev.metareactor.engine.shard;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.Informers;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;

/**
 * One hosted controller's part in sharding, all of it in one place: which informers it takes, the label on what it
 * writes, where a parent is synced, its registration with the sharder and the gauge of its share. Without
 * {@code --sharding} the same calls take whole informers, add no label and sync every parent here.
 *
 * <p>In order: the controller takes its informers ({@link #acquireSynced}, {@link #acquireOwned}) while it wires
 * itself, then {@link #join}s once they are all taken; from then on each sync asks {@link #place} first.
 */
public final class ShardParticipant {

  private static final Logger LOG = LoggerFactory.getLogger(ShardParticipant.class);

  private final Sharding sharding;
  private final Informers informers;
  private final ObjectApi api;
  private final MeterRegistry meters;
  private final String kind;
  private final String name;
  private final LongSupplier nanoTime;
  /** {@code shard.metareactor.dev/<tag>.<name>}: with {@code --sharding}, which shard owns a parent. */
  private final String ownerLabel;
  /** The informers of owned objects, which a move to another shard relabels. */
  private final List<InformerLease> owned = new ArrayList<>();
  /** With {@code --sharding}: moves parents to their shard; made by {@link #join}. */
  private volatile @Nullable ShardMover mover;

  /**
   * @param kind the controller object's kind
   * @param name the controller object's name
   * @param nanoTime the clock of a handover's wait ({@link Handover#WAIT_AT_MOST})
   */
  public ShardParticipant(Sharding sharding, Informers informers, ObjectApi api, MeterRegistry meters, String kind,
      String name, LongSupplier nanoTime) {
    this.sharding = Objects.requireNonNull(sharding, "sharding");
    this.informers = Objects.requireNonNull(informers, "informers");
    this.api = Objects.requireNonNull(api, "api");
    this.meters = Objects.requireNonNull(meters, "meters");
    this.kind = Objects.requireNonNull(kind, "kind");
    this.name = Objects.requireNonNull(name, "name");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.ownerLabel = ShardKeys.ownerLabel(kind, name);
  }

  /**
   * The labels the engine keeps on every object the controller writes for a parent, beside what the hook asks for:
   * with {@code --sharding}, the owner label with this replica's shard (a replica writes only for its own parents).
   */
  public Map<String, String> ownLabels() {
    return sharding.enabled() ? Map.of(ownerLabel, sharding.membership().self()) : Map.of();
  }

  /**
   * Takes the informer of a resource whose objects the controller syncs (parents, targets): with {@code --sharding},
   * of this replica's share of them only. The caller gives it back.
   */
  public InformerLease acquireSynced(ApiResource resource) {
    return sharding.enabled() ? informers.acquire(resource, "", sharding.selector(ownerLabel))
        : informers.acquire(resource);
  }

  /**
   * Takes the informer of a resource of objects the controller writes for its parents (children, attachments,
   * outputs, revisions): with {@code --sharding}, of those of this replica's parents only. The caller gives it back.
   */
  public InformerLease acquireOwned(ApiResource resource) {
    InformerLease lease = acquireSynced(resource);
    owned.add(lease);
    return lease;
  }

  /**
   * With {@code --sharding}, once every informer is taken: the mover of parents that belong to another shard (which
   * also holds back a parent handed to this one until its owned objects are cached), the sharder's registration, a
   * membership change syncing every parent of this replica's share that is now another shard's (to move it), and
   * the gauge {@code metareactor.shard.parents}. Without it, nothing.
   *
   * @param synced the resources whose objects the controller syncs, with which of them it is responsible for
   * @param syncAgain syncs the cached parents the controller is responsible for that a predicate accepts
   * @param responsible how many cached parents the controller is responsible for
   * @return ends all of it (when the controller stops)
   */
  public Disposable join(List<ShardedController.Synced> synced, Consumer<Predicate<KubeObject>> syncAgain,
      IntSupplier responsible) {
    if (!sharding.enabled()) {
      return Disposables.single();
    }
    ShardMover shardMover = new ShardMover(api, sharding.membership(), ownerLabel, owned, meters, kind, name,
        nanoTime);
    mover = shardMover;
    AutoCloseable registration = sharding.register(new ShardedController(kind, name, ownerLabel, synced,
        owned.stream().map(InformerLease::resource).distinct().toList()));
    Disposable changes = sharding.membership().changes().subscribe(live -> {
      shardMover.membershipChanged();
      syncAgain.accept(object -> shardMover.destination(object) != null);
    });
    // Held strongly: nothing else holds the supplier, and a gauge holds its object weakly by default.
    Gauge gauge = MetricCatalogue.SHARD_PARENTS.gauge(responsible, IntSupplier::getAsInt).strongReference(true)
        .tag("controller", name).tag("kind", kind).register(meters);
    return Disposables.composite(() -> {
      try {
        registration.close();
      } catch (Exception e) {
        LOG.warn("{} {}: leaving the sharder failed", kind, name, e);
      }
    }, changes, () -> meters.remove(gauge));
  }

  /**
   * With {@code --sharding}: {@code event} marked {@link ObjectEvent.Origin#MOVED_IN} when it brings into this
   * replica's caches an object moved to its shard, not a new one. Whoever moves a parent writes the {@link Handover}
   * annotation on it (keyed by the owner label) in the same patch as the label that brings it here; an object
   * created since, or assigned for the first time, has none. Without sharding, the event as it is.
   */
  public ObjectEvent mark(ObjectEvent event) {
    return sharding.enabled() && event.type() == ObjectEvent.Type.ADDED
        && event.object().annotations().containsKey(ownerLabel) ? event.asMovedIn() : event;
  }

  /**
   * With {@code --sharding}: moves {@code object} if another shard owns it now, or holds it back while this
   * replica's caches lack owned objects that moved with it ({@link ShardMover#place}); empty when it is synced here.
   */
  public Optional<Mono<Void>> place(ApiResource resource, KubeObject object) {
    ShardMover shardMover = mover;
    return shardMover == null ? Optional.empty() : shardMover.place(resource, object);
  }
}
