package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.StatusCheck;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import java.util.List;
import java.util.Objects;

/**
 * A child resource a hosted controller manages: what it is, its informer, how changed children update, and the status
 * checks a child must pass before the children ordered after it are written ({@link ChildOrder}) and, for a rolling
 * update, before the next child moves.
 */
public record ChildType(ApiResource resource, InformerLease informer, UpdateMethod updateMethod,
    List<StatusCheck> statusChecks) {

  public ChildType {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(informer, "informer");
    Objects.requireNonNull(updateMethod, "updateMethod");
    statusChecks = List.copyOf(statusChecks);
  }

  /** A child resource without status checks. */
  public ChildType(ApiResource resource, InformerLease informer, UpdateMethod updateMethod) {
    this(resource, informer, updateMethod, List.of());
  }

  /** Whether a desired object of this apiVersion and kind belongs to this type. */
  public boolean accepts(String apiVersion, String kind) {
    return resource.apiVersion().equals(apiVersion) && resource.kind().equals(kind);
  }
}
