package dev.metareactor.engine.informer;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.Objects;

/**
 * A change an informer saw. Routers only use it to find which parents to enqueue; a sync always reads the newest
 * state from the cache, never the event payload.
 *
 * @param type what happened
 * @param previous the object before an update, {@code null} for add and delete
 * @param object the object added or updated, or the last known state of a deleted one
 */
public record ObjectEvent(Type type, GenericKubernetesResource previous, GenericKubernetesResource object) {

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

  /** An update where nothing changed: the informer replaying its cache (periodic resync). */
  public boolean isResync() {
    return type == Type.UPDATED && previous != null
        && Objects.equals(previous.getMetadata().getResourceVersion(), object.getMetadata().getResourceVersion());
  }
}
