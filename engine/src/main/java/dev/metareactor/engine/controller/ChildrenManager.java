package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.OwnerRef;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ArrayNode;

/**
 * Converges a parent's children to the desired set, as Metacontroller's {@code ManageChildren} does, writing through
 * the {@link ChildApplier} of {@code --apply-strategy}:
 * <ul>
 *   <li>observed children that are not desired (and not already being deleted) are deleted, with background
 *       propagation and a UID precondition;</li>
 *   <li>desired children that do not exist are created, with a ControllerRef to the parent;</li>
 *   <li>existing children the applier says would change: the child type's update method decides: {@code OnDelete}
 *       leaves them, {@code Recreate} deletes them once the applier confirms the change (the next sync creates them
 *       again), {@code InPlace} writes them. Children being deleted are left alone.</li>
 * </ul>
 * When the hook orders its children ({@link ChildOrder}, {@code metareactor.dev/order}), a sync writes only what
 * the order lets it: the next children once those before them exist and pass their status checks, deletions highest
 * order first.
 * Every write is attempted even when some fail (a failed delete must not block a create); the failures are
 * reported together at the end. Not found on delete or update and conflicts on update are not failures: the next
 * event brings the parent back.
 *
 * <p>A create is only ever a create ({@link ChildApplier#create}): an object of a desired child's name that is not
 * among the parent's observed children is never taken over. When the cache shows it — or, when it does not (with
 * {@code --sharding} the caches hold only objects labelled for this replica), the create is refused with 409 and one
 * read shows it — and another object controls it (two controllers whose hooks ask for the same object, overlapping
 * selectors) or nothing does (someone else's object), it is left exactly as it is: the parent gets a
 * {@code ChildConflict} Warning ({@link ParentEvents}), a log line says it, {@code
 * metareactor_child_conflicts_total} counts it, and the rest of the sync goes on as upstream's does (Metacontroller
 * sends the create on every sync and swallows the {@code AlreadyExists}, so its users never learn of the clash;
 * its server-side apply takes the object over). A refused create is not sent again for {@value #RECHECK_SECONDS} s.
 * The parent's own child that lacks the applier's labels (with {@code --sharding}, one not yet relabelled for
 * this replica) gets them, and is counted too.
 *
 * <p>The {@code status} a desired child is given is dropped, as upstream drops it, unless the controller asks for it
 * to be written ({@link ChildStatus}): then it is written once the child is created or updated (or found current).
 */
public final class ChildrenManager {

  private static final Logger LOG = LoggerFactory.getLogger(ChildrenManager.class);
  /** How long a create refused for someone else's object is not sent again (a read each time, otherwise). */
  static final int RECHECK_SECONDS = 30;

  /** Who holds an object of a desired child's name, as {@code metareactor_child_conflicts_total} tags it. */
  public enum Holder {
    /** Another object controls it. */
    OTHER_CONTROLLER("other-controller"),
    /** No object controls it: someone else's, or one released. */
    NONE("none"),
    /** The parent itself: its child, without this replica's labels, which it is given. */
    THIS_PARENT("this-parent");

    private final String tag;

    Holder(String tag) {
      this.tag = tag;
    }

    /** The metric's tag value. */
    public String tag() {
      return tag;
    }
  }

  /** Where the conflicts over desired children are counted. */
  @FunctionalInterface
  public interface ConflictCounter {

    /** Counts nothing. */
    ConflictCounter NONE = (resource, holder) -> { };

    /** One desired child of {@code resource} that {@code holder} holds. */
    void counted(ApiResource resource, Holder holder);
  }

  /** What a parent was told about a desired child someone else holds. */
  private record Conflict(Holder holder, String message) {}

  /** A desired child of one parent. */
  private record Named(ApiResource resource, String namespace, String name, String parentUid) {}

  private final ObjectApi api;
  private final ChildApplier applier;
  private final ParentEvents events;
  private final ConflictCounter counter;
  /** Writes the status answers give children, or {@code null}: dropped, as upstream drops it. */
  private final @Nullable ChildStatus status;
  /** Refused creates, so that a lasting conflict costs a read per {@value #RECHECK_SECONDS} s, not per sync. */
  private final Cache<Named, Conflict> conflicts = Caches.newBuilder().maximumSize(10_000)
      .expireAfterWrite(Duration.ofSeconds(RECHECK_SECONDS)).build();

  /**
   * @param api where deletes go
   * @param applier how children are created and updated
   * @param events where a parent's {@code ChildConflict} Warnings go
   */
  public ChildrenManager(ObjectApi api, ChildApplier applier, ParentEvents events) {
    this(api, applier, events, ConflictCounter.NONE);
  }

  /** @param counter where each conflict over a desired child is counted */
  public ChildrenManager(ObjectApi api, ChildApplier applier, ParentEvents events, ConflictCounter counter) {
    this(api, applier, events, counter, null);
  }

  /**
   * @param status writes the {@code status} a desired child is given ({@code metareactor.dev/write-child-status}),
   *     or {@code null} to drop it
   */
  public ChildrenManager(ObjectApi api, ChildApplier applier, ParentEvents events, ConflictCounter counter,
      @Nullable ChildStatus status) {
    this.api = Objects.requireNonNull(api, "api");
    this.applier = Objects.requireNonNull(applier, "applier");
    this.events = Objects.requireNonNull(events, "events");
    this.counter = Objects.requireNonNull(counter, "counter");
    this.status = status;
  }

  /**
   * Applies {@code desired} against {@code observed}.
   *
   * @param parent the owner of created children
   * @param observed the children the parent owns now, by type
   * @param desired the children the hook asked for
   * @return completes when every write is done; fails with {@link WriteBatch.WritesFailedException} listing what
   *     failed
   */
  public Mono<Void> manage(KubeObject parent, Map<ChildType, List<KubeObject>> observed,
      List<DesiredChild> desired) {
    return manage(parent, observed, desired, WrittenChildren.Recorder.NONE);
  }

  /** The same, telling {@code recorder} of each child created. */
  public Mono<Void> manage(KubeObject parent, Map<ChildType, List<KubeObject>> observed,
      List<DesiredChild> desired, WrittenChildren.Recorder recorder) {
    List<Mono<Void>> writes = new ArrayList<>();
    ChildOrder.deletable(undesired(observed, desired), observed, desired).forEach((type, children) ->
        children.forEach(child -> writes.add(delete(type, child, "no longer desired", recorder))));
    Map<ChildType, Map<String, KubeObject>> existing = new HashMap<>();
    observed.forEach((type, children) -> {
      Map<String, KubeObject> byKey = new HashMap<>();
      children.forEach(c -> byKey.put(key(c.namespace(), c.name()), c));
      existing.put(type, byKey);
    });
    List<DesiredChild> writable = ChildOrder.writable(desired, observed);
    if (writable.size() < desired.size()) {
      LOG.debug("{}: {} of {} desired children wait for those ordered before them ({})", parent.describe(),
          desired.size() - writable.size(), desired.size(), ChildOrder.ANNOTATION);
    }
    for (DesiredChild child : writable) {
      KubeObject current = existing.getOrDefault(child.type(), Map.of())
          .get(key(child.namespace(), child.name()));
      writes.add(current == null ? create(parent, child, recorder)
          : update(parent, current, child, recorder).then(Mono.defer(() -> status(parent, current, child))));
    }
    return WriteBatch.run("can't reconcile children", writes);
  }

  /**
   * The observed children {@link #manage} deletes because {@code desired} does not name them: those of each type
   * that are not named there and not already being deleted (a {@code Recreate} of a changed child is not among
   * them).
   *
   * @return the children, by type; a type without any is left out
   */
  public static Map<ChildType, List<KubeObject>> undesired(Map<ChildType, List<KubeObject>> observed,
      List<DesiredChild> desired) {
    Map<ChildType, Set<String>> wanted = new HashMap<>();
    for (DesiredChild child : desired) {
      wanted.computeIfAbsent(child.type(), t -> new HashSet<>()).add(key(child.namespace(), child.name()));
    }
    Map<ChildType, List<KubeObject>> undesired = new LinkedHashMap<>();
    observed.forEach((type, children) -> {
      Set<String> wantedOfType = wanted.getOrDefault(type, Set.of());
      for (KubeObject child : children) {
        if (!child.deleting() && !wantedOfType.contains(key(child.namespace(), child.name()))) {
          undesired.computeIfAbsent(type, t -> new ArrayList<>()).add(child);
        }
      }
    });
    return undesired;
  }

  private Mono<Void> create(KubeObject parent, DesiredChild child, WrittenChildren.Recorder recorder) {
    ChildType type = child.type();
    KubeObject cached = type.informer().get(child.namespace(), child.name()).orElse(null);
    if (cached != null) {
      return standing(parent, child, cached, recorder);
    }
    Conflict known = conflicts.getIfPresent(new Named(type.resource(), child.namespace(), child.name(),
        parent.storedUid()));
    if (known != null) {
      report(parent, type, known);
      return Mono.empty();
    }
    return applier.create(parent, type.resource(), child.object())
        .doOnNext(created -> {
          recorder.created(type.resource(), created);
          recorder.wrote(HotLoopGuard.Write.create(type.resource(), child.namespace(), child.name(),
              child.object()));
          LOG.debug("created {} {}", type.resource().kind(), child.namespacedName());
        })
        .onErrorResume(e -> ApiException.codeOf(e) == 409, e -> api.get(type.resource(), child.namespace(),
                child.name())
            .flatMap(existing -> standing(parent, child, existing, recorder))
            .onErrorResume(gone -> ApiException.codeOf(gone) == 404, gone -> Mono.empty())
            .then(Mono.empty()))
        .onErrorMap(e -> failure("create", type, child.namespacedName(), e))
        .flatMap(created -> status(parent, created, child));
  }

  /** The status the answer gives {@code child}, written over {@code current} when asked for ({@link ChildStatus}). */
  private Mono<Void> status(KubeObject parent, KubeObject current, DesiredChild child) {
    return status == null ? Mono.empty() : status.write(parent, child.type(), current, child.object());
  }

  /**
   * What to do about a desired child that exists but is not among the parent's observed children: as the cache shows
   * it, or as read after a create was refused because it exists (an object the caches do not show: with
   * {@code --sharding} they hold only objects labelled for this replica). Someone else's object is left exactly as
   * it is, and reported; this parent's own child lacking the applier's labels (moved here from another replica, or
   * from before sharding) gets them, so that this replica's caches show it from then on.
   */
  private Mono<Void> standing(KubeObject parent, DesiredChild child, KubeObject existing,
      WrittenChildren.Recorder recorder) {
    ChildType type = child.type();
    OwnerRef controller = existing.controller();
    // A child in another namespace has no ControllerRef; its label says whose it is (OtherNamespaceChildren).
    boolean ofThisParent = controller == null ? OtherNamespaceChildren.trackedBy(existing, parent)
        : controller.uid().equals(parent.storedUid());
    if (!ofThisParent) {
      Conflict conflict = controller == null
          ? new Conflict(Holder.NONE, type.resource().kind() + " " + child.namespacedName()
              + " exists and is not this parent's: no object controls it; it is left as it is")
          : new Conflict(Holder.OTHER_CONTROLLER, type.resource().kind() + " " + child.namespacedName()
              + " is controlled by " + controller.kind() + " " + controller.name() + " (uid " + controller.uid()
              + "); it is left to that controller");
      conflicts.put(new Named(type.resource(), child.namespace(), child.name(), parent.storedUid()), conflict);
      report(parent, type, conflict);
      return Mono.empty();
    }
    Map<String, String> labels = new TreeMap<>(existing.labels());
    if (!labels.entrySet().containsAll(applier.ownLabels().entrySet())) {
      labels.putAll(applier.ownLabels());
      counter.counted(type.resource(), Holder.THIS_PARENT);
      LOG.info("{} {}: its {} {} lacks this replica's labels {}: labelled", parent.kind(), parent.namespacedName(),
          type.resource().kind(), child.namespacedName(), applier.ownLabels());
      // The labels as they were read, plus the replica's: the test of the resourceVersion refuses the patch (422)
      // when the object changed since the read, and a later sync reads it again.
      ArrayNode patch = KubeJson.nodes().arrayNode();
      patch.addObject().put("op", "test").put("path", "/metadata/resourceVersion")
          .put("value", Objects.requireNonNullElse(existing.resourceVersion(), ""));
      patch.addObject().put("op", "add").put("path", "/metadata/labels")
          .set("value", KubeJson.mapper().valueToTree(labels));
      return api.patch(type.resource(), child.namespace(), child.name(), ObjectApi.PatchType.JSON, patch)
          // Remembered as a create is: the next sync may run before this replica's cache shows the object.
          .doOnNext(written -> recorder.created(type.resource(), written.object()))
          .then()
          .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409
              || ApiException.codeOf(e) == 422, e -> Mono.empty());
    }
    // This parent's, and claimed by another rule than the observed children's (being released, or the cache has
    // not shown it as observed yet): the next sync sees it.
    LOG.debug("{} {} is {}'s child but not observed: left as it is", type.resource().kind(),
        child.namespacedName(), parent.describe());
    return Mono.empty();
  }

  /** A parent's conflict over a desired child: a log line, the {@code ChildConflict} Warning and the count. */
  private void report(KubeObject parent, ChildType type, Conflict conflict) {
    LOG.warn("{} {}: {}", parent.kind(), parent.namespacedName(), conflict.message());
    events.record(parent, EventRecorder.Type.Warning, "ChildConflict", conflict.message());
    counter.counted(type.resource(), conflict.holder());
  }

  private Mono<Void> update(KubeObject parent, KubeObject current, DesiredChild child,
      WrittenChildren.Recorder recorder) {
    if (current.deleting()) {
      return Mono.empty();
    }
    ChildType type = child.type();
    if (!type.updateMethod().recreate() && !type.updateMethod().inPlace()) {
      return Mono.empty(); // OnDelete: the new state applies when someone deletes the child
    }
    ChildApplier.Change change = applier.change(parent, type.resource(), current, child.object());
    if (change == null) {
      return Mono.empty();
    }
    if (type.updateMethod().recreate()) {
      return change.confirmed()
          .onErrorMap(e -> failure("check", type, child.namespacedName(), e))
          .flatMap(changed -> changed
              ? delete(type, current, "changed, update method " + type.updateMethod(), recorder) : Mono.empty());
    }
    return change.write()
        .doOnSuccess(updated -> {
          // A write that went through: the guard compares it with the parent's last ones.
          recorder.wrote(HotLoopGuard.Write.update(type.resource(), current, child.object()));
          LOG.debug("updated {} {}", type.resource().kind(), child.namespacedName());
        })
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409, e -> Mono.empty())
        .onErrorMap(e -> failure("update", type, child.namespacedName(), e))
        .then();
  }

  private Mono<Void> delete(ChildType type, KubeObject child, String why, WrittenChildren.Recorder recorder) {
    String name = child.namespacedName();
    return api.delete(type.resource(), child.namespace(), child.name(), child.uid())
        .doOnSuccess(ignored -> {
          recorder.wrote(HotLoopGuard.Write.delete(type.resource(), child.namespace(), child.name()));
          LOG.debug("deleted {} {}: {}", type.resource().kind(), name, why);
        })
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409, e -> Mono.empty())
        .onErrorMap(e -> failure("delete", type, name, e));
  }

  private static Throwable failure(String verb, ChildType type, String name, Throwable cause) {
    return new IllegalStateException("can't " + verb + " " + type.resource().kind() + " " + name + ": "
        + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()), cause);
  }

  private static String key(String namespace, String name) {
    return (namespace == null ? "" : namespace) + "/" + name;
  }
}
