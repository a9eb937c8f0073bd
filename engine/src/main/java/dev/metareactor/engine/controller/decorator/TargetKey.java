package dev.metareactor.engine.controller.decorator;

import dev.metareactor.engine.controller.SyncKey;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.Objects;

/**
 * The work-queue key of a DecoratorController: one decorated object. A decorator targets several resources, so
 * the key names the resource as well (upstream's {@code <apiVersion>:<kind>:<namespace>:<name>}).
 *
 * @param resource the target's resource
 * @param namespace its namespace, empty for cluster-scoped targets
 * @param name its name
 */
public record TargetKey(ApiResource resource, String namespace, String name) implements SyncKey {

  public TargetKey {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  @Override
  public String toString() {
    return resource.kind() + " " + KubeObject.namespacedName(namespace, name);
  }
}
