package dev.metareactor.engine.testing;

import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.KubeObject;

/** The {@link ObjectEvent}s an informer delivers, for unit tests of what reacts to them. */
public final class ObjectEvents {

  private ObjectEvents() {}

  public static ObjectEvent added(KubeObject object) {
    return new ObjectEvent(ObjectEvent.Type.ADDED, null, object);
  }

  public static ObjectEvent updated(KubeObject before, KubeObject after) {
    return new ObjectEvent(ObjectEvent.Type.UPDATED, before, after);
  }

  /** The informer replaying its cache: an update to the very same state. */
  public static ObjectEvent resync(KubeObject object) {
    return new ObjectEvent(ObjectEvent.Type.UPDATED, object, object);
  }

  /** A deletion, carrying the object's last known state. */
  public static ObjectEvent deleted(KubeObject object) {
    return new ObjectEvent(ObjectEvent.Type.DELETED, null, object);
  }
}
