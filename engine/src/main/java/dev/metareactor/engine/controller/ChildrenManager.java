package dev.metareactor.engine.controller;

import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

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
 * Every write is attempted even when some fail (a failed delete must not block a create); the failures are
 * reported together at the end. Not found on delete or update, already exists on create and conflicts on update
 * are not failures: the next event brings the parent back.
 *
 * <p>A desired child that the cache shows controlled by another object (two controllers whose hooks ask for the
 * same object, or overlapping selectors) is left to its controller and not even created: Metacontroller sends the
 * create and swallows the {@code AlreadyExists} on every sync, so its users never learn of the clash. Here the
 * parent gets a {@code ChildConflict} Warning ({@link ParentEvents}) and the rest of the sync goes on as upstream's
 * does.
 */
public final class ChildrenManager {

  private static final Logger LOG = LoggerFactory.getLogger(ChildrenManager.class);

  private final ObjectApi api;
  private final ChildApplier applier;
  private final ParentEvents events;

  /**
   * @param api where deletes go
   * @param applier how children are created and updated
   * @param events where a parent's {@code ChildConflict} Warnings go
   */
  public ChildrenManager(ObjectApi api, ChildApplier applier, ParentEvents events) {
    this.api = Objects.requireNonNull(api, "api");
    this.applier = Objects.requireNonNull(applier, "applier");
    this.events = Objects.requireNonNull(events, "events");
  }

  /**
   * Applies {@code desired} against {@code observed}.
   *
   * @param parent the owner of created children
   * @param observed the children the parent owns now, by type
   * @param desired the children the hook asked for
   * @return completes when every write is done; fails with {@link ChildWriteException} listing what failed
   */
  public Mono<Void> manage(KubeObject parent, Map<ChildType, List<KubeObject>> observed,
      List<DesiredChild> desired) {
    return manage(parent, observed, desired, WrittenChildren.Recorder.NONE);
  }

  /** The same, telling {@code recorder} of each child created. */
  public Mono<Void> manage(KubeObject parent, Map<ChildType, List<KubeObject>> observed,
      List<DesiredChild> desired, WrittenChildren.Recorder recorder) {
    List<Mono<Void>> writes = new ArrayList<>();
    undesired(observed, desired).forEach((type, children) ->
        children.forEach(child -> writes.add(delete(type, child, "no longer desired"))));
    Map<ChildType, Map<String, KubeObject>> existing = new HashMap<>();
    observed.forEach((type, children) -> {
      Map<String, KubeObject> byKey = new HashMap<>();
      children.forEach(c -> byKey.put(key(c.namespace(), c.name()), c));
      existing.put(type, byKey);
    });
    for (DesiredChild child : desired) {
      KubeObject current = existing.getOrDefault(child.type(), Map.of())
          .get(key(child.namespace(), child.name()));
      writes.add(current == null ? create(parent, child, recorder) : update(parent, current, child));
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
    KubeObject cached = child.type().informer().get(child.namespace(), child.name()).orElse(null);
    OwnerRef other = cached == null ? null : cached.controller();
    if (other != null && !other.uid().equals(parent.uid())) {
      String message = child.type().resource().kind() + " " + child.namespacedName() + " is controlled by "
          + other.kind() + " " + other.name() + " (uid " + other.uid() + "); it is left to that controller";
      LOG.warn("{} {}: {}", parent.kind(), parent.namespacedName(), message);
      events.record(parent, EventRecorder.Type.Warning, "ChildConflict", message);
      return Mono.empty();
    }
    if (cached != null && other == null) {
      // An object this parent did not adopt (its labels don't match the selector): a create is refused, as it is
      // here; server-side apply would take it over.
      LOG.debug("{} {} exists and is not {}'s child: left as it is", child.type().resource().kind(),
          child.namespacedName(), parent.describe());
      return Mono.empty();
    }
    return applier.create(parent, child.type().resource(), child.object())
        .doOnNext(created -> {
          recorder.created(child.type().resource(), created);
          LOG.debug("created {} {}", child.type().resource().kind(), child.namespacedName());
        })
        .onErrorResume(e -> ApiException.codeOf(e) == 409, e -> {
          LOG.debug("{} {} already exists", child.type().resource().kind(), child.namespacedName());
          return Mono.empty();
        })
        .onErrorMap(e -> failure("create", child.type(), child.namespacedName(), e))
        .then();
  }

  private Mono<Void> update(KubeObject parent, KubeObject current, DesiredChild child) {
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
          .flatMap(changed -> changed ? delete(type, current, "changed, update method " + type.updateMethod())
              : Mono.empty());
    }
    return change.write()
        .doOnSuccess(updated -> LOG.debug("updated {} {}", type.resource().kind(), child.namespacedName()))
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409, e -> Mono.empty())
        .onErrorMap(e -> failure("update", type, child.namespacedName(), e))
        .then();
  }

  private Mono<Void> delete(ChildType type, KubeObject child, String why) {
    String name = child.namespacedName();
    return api.delete(type.resource(), child.namespace(), child.name(), child.uid())
        .doOnSuccess(ignored -> LOG.debug("deleted {} {}: {}", type.resource().kind(), name, why))
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

  /** Some child writes failed; the message lists each. */
  public static final class ChildWriteException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ChildWriteException(String what, List<Throwable> failures) {
      super(what + ": " + String.join("; ", failures.stream().map(Throwable::getMessage).toList()));
      failures.forEach(this::addSuppressed);
    }
  }
}
