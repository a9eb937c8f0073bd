package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.StatusCheck;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import java.util.List;
import java.util.Objects;

/**
 * A child resource a hosted controller manages: what it is, its informer, how changed children update, and the status
 * checks a child must pass before the children ordered after it are written ({@link ChildOrder}) and, for a rolling
 * update, before the next child moves; and whether a change of a child's status alone syncs its parent
 * ({@code ignoreStatusChanges}).
 */
public record ChildType(ApiResource resource, InformerLease informer, UpdateMethod updateMethod,
    List<StatusCheck> statusChecks, boolean ignoreStatusChanges) {

  public ChildType {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(informer, "informer");
    Objects.requireNonNull(updateMethod, "updateMethod");
    statusChecks = List.copyOf(statusChecks);
  }

  /** A child resource whose children's status changes count. */
  public ChildType(ApiResource resource, InformerLease informer, UpdateMethod updateMethod,
      List<StatusCheck> statusChecks) {
    this(resource, informer, updateMethod, statusChecks, false);
  }

  /** A child resource without status checks, whose children's status changes count. */
  public ChildType(ApiResource resource, InformerLease informer, UpdateMethod updateMethod) {
    this(resource, informer, updateMethod, List.of(), false);
  }

  /**
   * Whether its parent is left alone for {@code event}, an event of a child of this type: the type's {@code
   * ignoreStatusChanges} is on and the event changed nothing but the child's status
   * ({@link ObjectEvent#changedNothingButStatus}).
   */
  public boolean ignores(ObjectEvent event) {
    return ignoreStatusChanges && event.changedNothingButStatus();
  }

  /** Whether a desired object of this apiVersion and kind belongs to this type. */
  public boolean accepts(String apiVersion, String kind) {
    return resource.apiVersion().equals(apiVersion) && resource.kind().equals(kind);
  }
}
