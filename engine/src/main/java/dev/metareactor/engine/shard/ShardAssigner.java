package dev.metareactor.engine.shard;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.Informers;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.node.ObjectNode;

/**
 * The sharder: the replica holding the leader lease gives every unassigned parent of every sharded controller to its
 * owner ({@link Membership#owner}), and moves the parents and owned objects of shards that are no longer live.
 *
 * <ul>
 *   <li>Unassigned parents (a new one, or one that became the controller's business) come from a metadata-only
 *   informer of the objects without the owner label, so the sharder caches only those, never the whole resource;
 *   each gets the label of its owner.</li>
 *   <li>When it starts leading, and whenever a shard leaves, it lists (metadata only) the parents and the owned
 *   objects labelled with a shard that is not live — and, when it starts and every {@link #SWEEP} after, those
 *   without the label at all (a cluster turning sharding on; an owned object created or edited by someone else
 *   without the label, which no replica caches) — and relabels the owned objects with their parent's new owner, then
 *   the parents. The new owner's informers so have the owned objects by the time the parent arrives.</li>
 * </ul>
 * A shard that is not live has stopped syncing: a replica that cannot renew its lease for the renew deadline ends
 * itself before the lease duration is over. Before it moves a shard's parents the sharder deletes that shard's lease
 * on the condition that it is still the version it saw expire ({@link Fence}): if the shard renewed it meanwhile (the
 * sharder's watch was late), the delete fails and nothing of that shard moves; if the shard still runs, it finds
 * its lease gone at its next renewal and ends itself. So no two replicas sync a parent that this moves.
 */
public final class ShardAssigner implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ShardAssigner.class);
  private static final int IN_PARALLEL = 16;
  private static final Duration RETRY = Duration.ofSeconds(5);
  /**
   * How long the membership must stay the same before a new sharder assigns anything, by default: replicas started
   * together (an install, a parallel StatefulSet) all join first, so that parents go to their final shard at once
   * instead of moving a moment later.
   */
  public static final Duration SETTLE = Duration.ofSeconds(3);
  /** The longest a new sharder waits for the membership to settle. */
  private static final Duration SETTLE_AT_MOST = Duration.ofSeconds(15);
  /**
   * How often the sharder looks again for parents and owned objects without the owner label. Unlabelled parents come
   * from a watch as they appear, but an owned object without the label (created before sharding was on, by a replica
   * without it, by hand with a ControllerRef, or whose label someone removed) is in no replica's cache: its parent's
   * hook is not shown it, and its parent may even create it again. Each sweep costs a metadata-only list of each
   * synced and owned resource's unlabelled objects, so not much more often than that.
   */
  public static final Duration SWEEP = Duration.ofMinutes(5);

  private final ObjectApi api;
  private final Informers informers;
  private final Membership membership;
  private final Fence fence;
  private final Duration settle;
  private final Scheduler scheduler;
  private final MeterRegistry meters;
  private final Map<ShardedController, @Nullable Running> controllers = new LinkedHashMap<>();
  private boolean leading;
  /** Leading, and the membership settled: assigning. */
  private boolean assigning;
  private boolean closed;
  private @Nullable Disposable watchingMembership;
  private @Nullable Disposable settling;
  private @Nullable Disposable sweeping;

  /** Ends a shard that is not live before its parents move: whether it is ended (else it renewed meanwhile). */
  @FunctionalInterface
  public interface Fence {
    Mono<Boolean> end(String shard);
  }

  /**
   * @param settle how long the membership must stay the same before this sharder, once leading, assigns anything
   *     ({@link #SETTLE}; zero: at once)
   */
  public ShardAssigner(ObjectApi api, Informers informers, Membership membership, Fence fence, Duration settle,
      Scheduler scheduler, MeterRegistry meters) {
    this.api = Objects.requireNonNull(api, "api");
    this.informers = Objects.requireNonNull(informers, "informers");
    this.membership = Objects.requireNonNull(membership, "membership");
    this.fence = Objects.requireNonNull(fence, "fence");
    this.settle = Objects.requireNonNull(settle, "settle");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.meters = Objects.requireNonNull(meters, "meters");
  }

  /** Adds a controller; it is assigned while this replica leads. Closing the registration removes it. */
  public synchronized AutoCloseable register(ShardedController controller) {
    Objects.requireNonNull(controller, "controller");
    controllers.put(controller, assigning ? start(controller) : null);
    return () -> unregister(controller);
  }

  private synchronized void unregister(ShardedController controller) {
    Running running = controllers.remove(controller);
    if (running != null) {
      running.stop();
    }
  }

  /** This replica holds the leader lease: assign from now on, once the membership has settled. */
  public synchronized void lead() {
    if (leading || closed) {
      return;
    }
    leading = true;
    if (settle.isZero()) {
      assign();
      return;
    }
    settling = Flux.concat(Mono.just(List.<String>of()), membership.changes())
        .switchMap(change -> Mono.delay(settle, scheduler))
        .next()
        .timeout(SETTLE_AT_MOST, Mono.just(0L), scheduler)
        .subscribe(settled -> assign());
  }

  private synchronized void assign() {
    if (assigning || closed) {
      return;
    }
    assigning = true;
    LOG.info("assigning parents to the live shards {}", membership.live());
    controllers.replaceAll((controller, running) -> start(controller));
    sweeping = Flux.interval(SWEEP, SWEEP, scheduler).subscribe(tick -> passAll(true));
    List<List<String>> previous = new ArrayList<>(List.of(membership.live()));
    watchingMembership = membership.changes().publishOn(scheduler).subscribe(live -> {
      boolean lost = !live.containsAll(previous.get(0));
      previous.set(0, live);
      if (lost) {
        passAll(false);
      }
    });
  }

  /** A pass of every controller: for what shards that are not live own, and with {@code withUnassigned} for none. */
  private synchronized void passAll(boolean withUnassigned) {
    controllers.values().forEach(running -> {
      if (running != null) {
        running.requestPass(withUnassigned);
      }
    });
  }

  private Running start(ShardedController controller) {
    Running running = new Running(controller);
    running.requestPass(true);
    return running;
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (settling != null) {
      settling.dispose();
    }
    if (watchingMembership != null) {
      watchingMembership.dispose();
    }
    if (sweeping != null) {
      sweeping.dispose();
    }
    controllers.values().forEach(running -> {
      if (running != null) {
        running.stop();
      }
    });
  }

  /** The assignment of one controller while this replica leads. */
  private final class Running {
    private final ShardedController controller;
    private final Counter assigned;
    private final Counter takenOver;
    private final Disposable.Composite subscriptions = Disposables.composite();
    private final List<InformerLease> unassigned = new ArrayList<>();
    // Guarded by this Running: one pass at a time, a request during one runs another after it.
    private boolean passing;
    private boolean passPending;
    private boolean pendingWithUnassigned;
    private boolean watching;
    private boolean stopped;

    Running(ShardedController controller) {
      this.controller = controller;
      this.assigned = MetricCatalogue.SHARD_ASSIGNMENTS.counter().tag("controller", controller.name())
          .tag("kind", controller.kind()).register(meters);
      this.takenOver = MetricCatalogue.SHARD_TAKEOVERS.counter().tag("controller", controller.name())
          .tag("kind", controller.kind()).register(meters);
    }

    synchronized void requestPass(boolean withUnassigned) {
      if (stopped) {
        return;
      }
      if (passing) {
        passPending = true;
        pendingWithUnassigned |= withUnassigned;
        return;
      }
      passing = true;
      subscriptions.add(pass(withUnassigned)
          .onErrorResume(e -> {
            LOG.warn("{}: moving parents off shards that are not live failed, again in {}: {}",
                controller.description(), RETRY, e.toString());
            return Mono.delay(RETRY, scheduler).then(Mono.fromRunnable(() -> requestPass(withUnassigned)));
          })
          .subscribe(null, null, this::passDone));
    }

    private synchronized void passDone() {
      passing = false;
      if (!watching && !stopped) {
        watching = true;
        watchUnassigned();
      }
      if (passPending) {
        passPending = false;
        boolean withUnassigned = pendingWithUnassigned;
        pendingWithUnassigned = false;
        requestPass(withUnassigned);
      }
    }

    synchronized void stop() {
      stopped = true;
      subscriptions.dispose();
      unassigned.forEach(InformerLease::close);
    }

    /**
     * Lists what belongs to shards that are not live (and, with {@code withUnassigned}, what belongs to none) and
     * moves it: owned objects first, then parents.
     */
    private Mono<Void> pass(boolean withUnassigned) {
      List<String> live = membership.live();
      String label = controller.ownerLabel();
      List<String> selectors = new ArrayList<>();
      selectors.add(label + "," + label + " notin (" + String.join(",", live) + ")");
      if (withUnassigned) {
        selectors.add("!" + label);
      }
      Map<String, Move> parents = new HashMap<>();
      // By parent UID, the versions the owned objects moving with it got: the parent's Handover annotation.
      Map<String, Map<String, String>> moved = new ConcurrentHashMap<>();
      Set<String> living = new HashSet<>();
      return Flux.fromIterable(controller.synced())
          .concatMap(synced -> Flux.fromIterable(selectors).concatMap(selector -> api.list(synced.resource(),
                  selector, true)
              .doOnNext(objects -> objects.forEach(parent -> {
                if (parent.labels().containsKey(label) || synced.responsible().test(parent)) {
                  String uid = parent.storedUid();
                  parents.put(uid, new Move(synced.resource(), parent, membership.owner(uid)));
                }
              }))))
          .then(Mono.defer(() -> endShardsOf(parents, label, living)))
          .then(Mono.defer(() -> Flux.fromIterable(controller.owned())
              .concatMap(resource -> Flux.fromIterable(selectors)
                  .concatMap(selector -> api.list(resource, selector, true))
                  .flatMapIterable(objects -> objects)
                  .filter(child -> !living.contains(child.labels().get(label)))
                  .flatMap(child -> moveOwned(resource, child, parents, moved), IN_PARALLEL))
              .then()))
          // A parent that had no owner is assigned without the annotation, so that its owner sees a new parent.
          .then(Mono.defer(() -> Flux.fromIterable(parents.values())
              .flatMap(move -> relabel(move.resource(), move.object(), ShardMover.handoverPatch(label,
                  move.shard(), null, move.object().labels().containsKey(label)
                      ? moved.getOrDefault(move.object().storedUid(), Map.of()) : null)), IN_PARALLEL)
              .then()))
          .doOnSuccess(done -> {
            if (!parents.isEmpty()) {
              LOG.info("{}: gave {} parents (unassigned, or of shards not live) to the live shards {}",
                  controller.description(), parents.size(), live);
            }
          });
    }

    /**
     * Ends each shard the parents to move are labelled with ({@link Fence}); what a shard that turns out to live
     * owns (its parents, and objects labelled with it) is left where it is, and the shard added to {@code living}.
     */
    private Mono<Void> endShardsOf(Map<String, Move> parents, String label, Set<String> living) {
      Set<String> shards = new HashSet<>();
      parents.values().forEach(move -> {
        String shard = move.object().labels().get(label);
        if (shard != null) {
          shards.add(shard);
        }
      });
      return Flux.fromIterable(shards)
          .concatMap(shard -> fence.end(shard).filter(ended -> !ended).map(ended -> shard))
          .collectList()
          .doOnNext(renewed -> {
            if (!renewed.isEmpty()) {
              LOG.info("{}: shards {} renewed their leases after all: what they own stays", controller.description(),
                  renewed);
              living.addAll(renewed);
              parents.values().removeIf(move -> living.contains(move.object().labels().get(label)));
            }
          })
          .then();
    }

    /**
     * An owned object to the owner of its parent: moving with it (its version noted in {@code moved} for the
     * parent's annotation), or (found by the parent's label) staying.
     */
    private Mono<Void> moveOwned(ApiResource resource, KubeObject child, Map<String, Move> parents,
        Map<String, Map<String, String>> moved) {
      OwnerRef ref = child.controller();
      if (ref == null) {
        return Mono.empty();
      }
      Move parent = parents.get(ref.uid());
      Mono<String> target = parent != null ? Mono.just(parent.shard()) : currentOwner(child, ref);
      return target.flatMap(shard -> shard.equals(child.labels().get(controller.ownerLabel())) ? Mono.empty()
          : relabel(resource, child, ShardMover.labelPatch(controller.ownerLabel(), shard, null))
              .doOnNext(written -> {
                if (parent != null) {
                  Handover.record(moved.computeIfAbsent(ref.uid(), uid -> new ConcurrentHashMap<>()), resource,
                      written.resourceVersion());
                }
              })
              .then());
    }

    /**
     * The shard of a parent that is not moving, for an owned object that is (labelled with a shard gone, or not at
     * all): read from the parent itself; empty when the object's controller is none of this controller's parents.
     */
    private Mono<String> currentOwner(KubeObject child, OwnerRef ref) {
      for (ShardedController.Synced synced : controller.synced()) {
        ApiResource resource = synced.resource();
        if (resource.kind().equals(ref.kind()) && ApiResource.groupOf(ref.apiVersion()).equals(resource.group())) {
          return api.get(resource, resource.namespaced() ? child.namespace() : "", ref.name())
              .filter(parent -> ref.uid().equals(parent.uid()))
              .map(parent -> {
                String shard = parent.labels().get(controller.ownerLabel());
                return shard != null && membership.isLive(shard) ? shard : membership.owner(ref.uid());
              })
              .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty());
        }
      }
      return Mono.empty();
    }

    /** A merge patch of an object moving off a shard; completes with it as written, or empty when it is gone. */
    private Mono<KubeObject> relabel(ApiResource resource, KubeObject object, ObjectNode patch) {
      return api.mergePatch(resource, object.namespace(), object.name(), patch)
          .doOnSuccess(done -> takenOver.increment())
          .map(ObjectApi.Written::object)
          .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty());
    }

    /** Unassigned parents, from a watch of the objects without the owner label, each given to its owner. */
    private void watchUnassigned() {
      for (ShardedController.Synced synced : controller.synced()) {
        InformerLease informer = informers.acquireMetadata(synced.resource(), "!" + controller.ownerLabel());
        unassigned.add(informer);
        subscriptions.add(informer.events()
            .filter(event -> event.type() != ObjectEvent.Type.DELETED)
            .subscribe(event -> assign(synced, event.object())));
      }
    }

    private void assign(ShardedController.Synced synced, KubeObject parent) {
      if (parent.labels().containsKey(controller.ownerLabel()) || !synced.responsible().test(parent)) {
        return;
      }
      String shard = membership.owner(parent.storedUid());
      subscriptions.add(api.mergePatch(synced.resource(), parent.namespace(), parent.name(),
              ShardMover.labelPatch(controller.ownerLabel(), shard, null))
          .subscribe(done -> assigned.increment(), e -> {
            if (ApiException.codeOf(e) != 404) {
              LOG.debug("{}: assigning {} to {} failed, again in {}: {}", controller.description(),
                  parent.describe(), shard, RETRY, e.toString());
              subscriptions.add(Mono.delay(RETRY, scheduler).subscribe(tick -> retryAssign(synced, parent)));
            }
          }));
    }

    /** Assigns the parent again if the informer still has it unassigned. */
    private void retryAssign(ShardedController.Synced synced, KubeObject parent) {
      for (InformerLease informer : unassigned) {
        if (informer.resource().equals(synced.resource())) {
          informer.get(parent.namespace(), parent.name()).ifPresent(current -> assign(synced, current));
        }
      }
    }
  }

  /** A parent to relabel with {@code shard}. */
  private record Move(ApiResource resource, KubeObject object, String shard) {}
}
