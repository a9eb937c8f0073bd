package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.KubeObject;
import java.util.Objects;

/**
 * The work-queue key of a parent object: what one sync is about. Namespace is empty for cluster-scoped parents.
 */
public record ParentKey(String namespace, String name) implements SyncKey {

  public ParentKey {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  @Override
  public String toString() {
    return KubeObject.namespacedName(namespace, name);
  }
}
