package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Optional;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a controller kind brings to {@link ObjectSync}: the resources it syncs, the keys of their objects, and the
 * {@link Plan} of each sync.
 *
 * @param <K> the keys of the synced objects in the controller's work queue
 */
public interface Kind<K extends SyncKey> {

  /** The resources whose objects the controller syncs. */
  List<SyncedResource> resources();

  /** The synced resource {@code key} is of; empty for a key of none (a resource no longer targeted). */
  Optional<SyncedResource> resourceOf(K key);

  /**
   * The keys a periodic resync enqueues for {@code object}, of {@code type}: its own key, or (MapController) one per
   * unit of work about it.
   */
  List<K> keysOf(SyncedResource type, KubeObject object);

  /**
   * The kind's part of one sync of {@code key}, about {@code object}, whose tree (sent to the hook) is {@code json}.
   */
  Plan plan(K key, SyncedObject object, ObjectNode json);

  /**
   * Whether a namespaced synced object may own objects in other namespaces ({@link OtherNamespaceChildren}): the
   * garbage collector does not delete those, so the controller keeps its finalizer on every selected object and
   * deletes them itself before letting the object go.
   */
  default boolean ownsInOtherNamespaces() {
    return false;
  }
}
