package dev.metareactor.engine.api;

import java.util.List;
import java.util.Objects;

/**
 * A {@code childResources[]} (or {@code attachments[]}) entry: the resource, how changed children update, the
 * status checks a rolling update waits for ({@code updateStrategy.statusChecks.conditions}; accepted with any method,
 * as Metacontroller does, and used only by the rolling ones and by ordered children), and {@code ignoreStatusChanges}:
 * an update of such a child that changed nothing but its status does not sync its parent (upstream's switch of the
 * same name on parents, #986, extended to the objects a parent owns).
 */
public record ChildResourceRule(ResourceRule resource, UpdateMethod updateMethod, List<StatusCheck> statusChecks,
    boolean ignoreStatusChanges) {

  public ChildResourceRule {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(updateMethod, "updateMethod");
    statusChecks = List.copyOf(statusChecks);
  }

  /** A rule without status checks, whose children's status changes sync their parent. */
  public ChildResourceRule(ResourceRule resource, UpdateMethod updateMethod) {
    this(resource, updateMethod, List.of(), false);
  }
}
