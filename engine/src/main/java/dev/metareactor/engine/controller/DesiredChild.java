package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.KubeObject;
import java.util.Objects;
import tools.jackson.databind.node.ObjectNode;

/** One child a hook asked for, with the declared type it belongs to. */
public record DesiredChild(ChildType type, ObjectNode object) {

  public DesiredChild {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(object, "object");
  }

  public String namespace() {
    return object.path("metadata").path("namespace").asString("");
  }

  public String name() {
    return object.path("metadata").path("name").asString();
  }

  /** {@code namespace/name}, or {@code name} for a cluster-scoped child. */
  public String namespacedName() {
    return KubeObject.namespacedName(namespace(), name());
  }
}
