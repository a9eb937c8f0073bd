package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A change an informer saw. Routers only use it to find which parents to enqueue; a sync always reads the newest
 * state from the cache, never the event payload.
 *
 * @param type what happened
 * @param previous the object before an update, {@code null} for add and delete
 * @param object the object added or updated, or the last known state of a deleted one
 */
public record ObjectEvent(Type type, @Nullable KubeObject previous, KubeObject object) {

  /** Kinds of change. */
  public enum Type {
    ADDED,
    UPDATED,
    DELETED
  }

  public ObjectEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(object, "object");
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

  /** An update where nothing changed: the informer replaying its cache (periodic resync). */
  public boolean isResync() {
    return type == Type.UPDATED && previous != null
        && Objects.equals(previous.resourceVersion(), object.resourceVersion());
  }
}
