package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.Objects;
import java.util.Optional;

/**
 * The object one sync is about (a CompositeController's parent, a DecoratorController's target), with the synced
 * resource it belongs to.
 *
 * @param type its resource, as the controller syncs it
 * @param object the object as this sync knows it
 */
public record SyncedObject(SyncedResource type, KubeObject object) {

  public SyncedObject {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(object, "object");
  }

  /** The cached object {@code namespace/name} of {@code type}, if the controller is responsible for it. */
  public static Optional<SyncedObject> find(SyncedResource type, String namespace, String name) {
    return type.responsible(namespace, name).map(object -> new SyncedObject(type, object));
  }

  public ApiResource resource() {
    return type.resource();
  }

  /** The same object as written since (a finalizer added or removed). */
  public SyncedObject as(KubeObject written) {
    return new SyncedObject(type, written);
  }

  /**
   * The newest cached copy of this very object (same UID), else the one this sync knows: good enough for writes that
   * check what they change (removing our finalizer tests our name at its index).
   */
  public KubeObject latest() {
    return type.informer().get(object.namespace(), object.name())
        .filter(cached -> cached.storedUid().equals(object.uid()))
        .orElse(object);
  }
}
