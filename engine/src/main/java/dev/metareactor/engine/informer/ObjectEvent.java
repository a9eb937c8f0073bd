package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import dev.metareactor.engine.queue.Trigger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.node.ObjectNode;

/**
 * A change an informer saw. Routers only use it to find which parents to enqueue; a sync always reads the newest
 * state from the cache, never the event payload.
 *
 * @param type what happened
 * @param previous the object before an update, {@code null} for add and delete
 * @param object the object added or updated, or the last known state of a deleted one
 * @param origin what the controller routing the event knows of where it comes from (informers deliver every event
 *     as {@link Origin#UNKNOWN}; only the controller knows its own writes and its shard's moves)
 */
public record ObjectEvent(Type type, @Nullable KubeObject previous, KubeObject object, Origin origin) {

  /** The annotation by which someone asks for a sync of an object (upstream's #43 and #675). */
  public static final String SYNC_REQUESTED_AT = "metacontroller.k8s.io/sync-requested-at";

  /** Kinds of change. */
  public enum Type {
    ADDED,
    UPDATED,
    DELETED
  }

  /** Where an event comes from, as far as the controller routing it knows. */
  public enum Origin {
    /** Nothing known: a change someone made (what informers deliver). */
    UNKNOWN,
    /**
     * It shows exactly what a write of the controller routing it made: the write coming back, not a change
     * ({@link dev.metareactor.engine.queue.Trigger.Cause#ECHO}).
     */
    OWN_WRITE,
    /**
     * An object that appeared in this replica's sharded cache because it was moved to this replica's shard, not
     * created ({@link dev.metareactor.engine.queue.Trigger.Cause#SHARD_MOVE}).
     */
    MOVED_IN
  }

  public ObjectEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(object, "object");
    Objects.requireNonNull(origin, "origin");
  }

  /** An event as an informer delivers it: its origin unknown. */
  public ObjectEvent(Type type, @Nullable KubeObject previous, KubeObject object) {
    this(type, previous, object, Origin.UNKNOWN);
  }

  /** Whether the event shows exactly what a write of the controller routing it made ({@link Origin#OWN_WRITE}). */
  public boolean ownWrite() {
    return origin == Origin.OWN_WRITE;
  }

  /** This event, known to show what a write of the controller routing it made. */
  public ObjectEvent asOwnWrite() {
    return new ObjectEvent(type, previous, object, Origin.OWN_WRITE);
  }

  /** This event, known to bring an object moved to this replica's shard. */
  public ObjectEvent asMovedIn() {
    return new ObjectEvent(type, previous, object, Origin.MOVED_IN);
  }

  /**
   * An update that changed nothing but status: same generation, labels and annotations, and no deletion started
   * (what {@code ignoreStatusChanges} drops). Resyncs are not such updates.
   */
  public boolean changedOnlyStatus() {
    if (type != Type.UPDATED || previous == null || isResync()) {
      return false;
    }
    return previous.generation() == object.generation()
        && previous.labels().equals(object.labels())
        && previous.annotations().equals(object.annotations())
        && !object.deleting();
  }

  /**
   * An update that changed nothing but {@code status}: the object before and after are the same once {@code status}
   * and {@code metadata.resourceVersion} are left out ({@code managedFields} never reaches the cache). What a child
   * or attachment type's {@code ignoreStatusChanges} drops. Stricter than {@link #changedOnlyStatus}, which upstream's
   * parents use: a child often has no {@code generation} (a ConfigMap, a Secret), so an equal generation says nothing
   * of its data; the trees are compared only after the cheap checks pass, and only where a type asks for it.
   * Resyncs are not such updates.
   */
  public boolean changedNothingButStatus() {
    if (!changedOnlyStatus() || previous == null) {
      return false;
    }
    return !previous.deleting() && previous.ownerReferences().equals(object.ownerReferences())
        && previous.finalizers().equals(object.finalizers())
        && withoutStatus(previous).equals(withoutStatus(object));
  }

  /** The object's tree without {@code status} and {@code metadata.resourceVersion}. */
  private static ObjectNode withoutStatus(KubeObject object) {
    ObjectNode tree = object.toTree();
    tree.remove("status");
    if (tree.get("metadata") instanceof ObjectNode metadata) {
      metadata.remove("resourceVersion");
    }
    return tree;
  }

  /**
   * The controllers (owner references with {@code controller: true}) this event concerns: the object's own, and,
   * when an update released the object or moved it to another controller, the previous one too (it must notice
   * the object is gone). Each with the state of the object that carried it.
   */
  public List<Map.Entry<KubeObject, OwnerRef>> controllers() {
    List<Map.Entry<KubeObject, OwnerRef>> result = new ArrayList<>(2);
    OwnerRef now = object.controller();
    if (now != null) {
      result.add(Map.entry(object, now));
    }
    if (type == Type.UPDATED && previous != null) {
      OwnerRef before = previous.controller();
      if (before != null && (now == null || !Objects.equals(before.uid(), now.uid()))) {
        result.add(Map.entry(previous, before));
      }
    }
    return result;
  }

  /**
   * Why this event asks for a sync of the object it is about: its creation, deletion, a changed
   * {@value #SYNC_REQUESTED_AT} annotation, its spec (its generation; any change but of metadata for an object
   * whose generation the API server does not keep, like a ConfigMap's data), its labels, annotations, finalizers or
   * deletion, its status alone, the informer replaying its cache, the controller's own write coming back
   * ({@link Origin#OWN_WRITE}: {@link Trigger.Cause#ECHO}), or its move to this replica's shard ({@link
   * Origin#MOVED_IN}: {@link Trigger.Cause#SHARD_MOVE}). Shared constants: nothing is allocated.
   */
  public Trigger trigger() {
    return Trigger.of(cause());
  }

  private Trigger.Cause cause() {
    if (isResync()) {
      return Trigger.Cause.CACHE_FLUSH;
    }
    if (type == Type.ADDED) {
      return origin == Origin.MOVED_IN ? Trigger.Cause.SHARD_MOVE : Trigger.Cause.CREATED;
    }
    if (type == Type.DELETED || previous == null) {
      return Trigger.Cause.DELETED;
    }
    if (origin == Origin.OWN_WRITE) {
      return Trigger.Cause.ECHO;
    }
    if (!Objects.equals(previous.annotations().get(SYNC_REQUESTED_AT), object.annotations().get(SYNC_REQUESTED_AT))) {
      return Trigger.Cause.SYNC_REQUESTED;
    }
    if (previous.generation() != object.generation()) {
      return Trigger.Cause.SPEC;
    }
    if (!previous.labels().equals(object.labels()) || !previous.annotations().equals(object.annotations())
        || !previous.finalizers().equals(object.finalizers()) || previous.deleting() != object.deleting()) {
      return Trigger.Cause.METADATA;
    }
    return object.generation() > 0 ? Trigger.Cause.STATUS : Trigger.Cause.SPEC;
  }

  /** How the object changed, as a trigger about it names it. */
  public Trigger.Change change() {
    return switch (type) {
      case ADDED -> Trigger.Change.CREATED;
      case UPDATED -> Trigger.Change.UPDATED;
      case DELETED -> Trigger.Change.DELETED;
    };
  }

  /**
   * A trigger of {@code cause} naming this event's object (a child, a related object, an input): which one and how
   * it changed; the strings are the object's own.
   */
  public Trigger triggerAbout(Trigger.Cause cause, KubeObject changed) {
    return Trigger.about(cause, change(), changed.kind(), changed.namespace(), changed.name());
  }

  /**
   * The cause this event of an owned object (a child, an attachment, an output; {@code owned} is the event's object
   * or its previous state) gives its owner: one added already controlled by the owner is the echo of the engine's
   * own create ({@link Trigger.Cause#ECHO}: nobody else creates objects controlled by the engine's parents, and an
   * adopted orphan arrives as an update), and so is an update that shows the engine's own write ({@link #ownWrite});
   * any other is a change of a child ({@link Trigger.Cause#CHILD}).
   */
  public Trigger ownedTrigger(KubeObject owned) {
    boolean echo = type == Type.ADDED || (origin == Origin.OWN_WRITE && type == Type.UPDATED);
    return triggerAbout(echo ? Trigger.Cause.ECHO : Trigger.Cause.CHILD, owned);
  }

  /** An update where nothing changed: the informer replaying its cache (periodic resync). */
  public boolean isResync() {
    return type == Type.UPDATED && previous != null
        && Objects.equals(previous.resourceVersion(), object.resourceVersion());
  }
}
