package dev.metareactor.engine.controller.rolling;

import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.kube.ApiResource;
import java.util.Objects;

/**
 * A child as a ControllerRevision names it: API group (no version, {@code ""} for core), kind, and the name a v1
 * hook request keys it by — its name, or {@code namespace/name} for a namespaced child of a cluster-scoped parent.
 * Observed and desired children are looked up by the same key as claims are made with, which is what keeps a
 * rollout of namespaced children going (Metacontroller looks observed children up by {@code namespace/name} and
 * claims them by name, and its rollouts of namespaced children stall after the first one).
 */
public record ClaimedChild(String apiGroup, String kind, String name) {

  public ClaimedChild {
    Objects.requireNonNull(apiGroup, "apiGroup");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
  }

  /** The claim on a child of {@code type} named {@code namespace/name}, whose parent is or is not namespaced. */
  public static ClaimedChild of(ApiResource type, boolean parentNamespaced, String namespace, String name) {
    return new ClaimedChild(type.group(), type.kind(),
        ObjectMapKeys.objectKey(HookSpec.HookVersion.V1, parentNamespaced, namespace, name));
  }

  /** {@code <Kind> <name>}, as Metacontroller's rollout messages name a child. */
  @Override
  public String toString() {
    return kind + " " + name;
  }
}
