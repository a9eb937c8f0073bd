package dev.metareactor.engine.history;

import java.util.Locale;
import java.util.Objects;

/**
 * A parent of one controller, as the ring of recent syncs files it.
 *
 * @param kind the controller's kind in lower case ({@code compositecontroller}, {@code decoratorcontroller},
 *     {@code mapcontroller}), as in {@code /debug/syncs} paths
 * @param controller the controller's name
 * @param namespace the parent's namespace, {@code ""} when it is cluster-scoped
 * @param name the parent's name
 */
public record ParentRef(String kind, String controller, String namespace, String name) {

  public ParentRef {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(controller, "controller");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  /** The parent of a controller of {@code controllerKind} ({@code CompositeController}, any case). */
  public static ParentRef of(String controllerKind, String controller, String namespace, String name) {
    return new ParentRef(controllerKind.toLowerCase(Locale.ROOT), controller, namespace, name);
  }

  /** Whether this parent belongs to the controller {@code kind}/{@code controller}. */
  boolean of(String kind, String controller) {
    return this.kind.equals(kind) && this.controller.equals(controller);
  }

  /** {@code namespace/name}, or {@code name} when cluster-scoped. */
  @Override
  public String toString() {
    return namespace.isEmpty() ? name : namespace + "/" + name;
  }
}
