package dev.metareactor.engine.controller.rolling;

import java.util.Objects;

/**
 * A child as a ControllerRevision names it: API group (no version, {@code ""} for core), kind, and name. Children
 * live in their parent's namespace, so the name alone is unique within a group and kind; keying by name (and never
 * by {@code namespace/name}) is what keeps a rollout of namespaced children going (Metacontroller looks namespaced
 * children up by one and claims them by the other, and its rollouts stall after the first child).
 */
public record ClaimedChild(String apiGroup, String kind, String name) {

  public ClaimedChild {
    Objects.requireNonNull(apiGroup, "apiGroup");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(name, "name");
  }

  /** {@code <Kind> <name>}, as Metacontroller's rollout messages name a child. */
  @Override
  public String toString() {
    return kind + " " + name;
  }
}
