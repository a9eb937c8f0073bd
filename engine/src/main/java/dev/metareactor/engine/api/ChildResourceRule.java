package dev.metareactor.engine.api;

import java.util.List;
import java.util.Objects;

/**
 * A {@code childResources[]} (or {@code attachments[]}) entry: the resource, how changed children update, and the
 * status checks a rolling update waits for ({@code updateStrategy.statusChecks.conditions}; accepted with any method,
 * as Metacontroller does, and used only by the rolling ones).
 */
public record ChildResourceRule(ResourceRule resource, UpdateMethod updateMethod, List<StatusCheck> statusChecks) {

  public ChildResourceRule {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(updateMethod, "updateMethod");
    statusChecks = List.copyOf(statusChecks);
  }

  /** A rule without status checks. */
  public ChildResourceRule(ResourceRule resource, UpdateMethod updateMethod) {
    this(resource, updateMethod, List.of());
  }
}
