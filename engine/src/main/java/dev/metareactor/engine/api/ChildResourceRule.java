package dev.metareactor.engine.api;

import java.util.Objects;

/** A {@code childResources[]} (or {@code attachments[]}) entry: the resource and how changed children update. */
public record ChildResourceRule(ResourceRule resource, UpdateMethod updateMethod) {

  public ChildResourceRule {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(updateMethod, "updateMethod");
  }
}
