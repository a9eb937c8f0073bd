package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import java.util.Objects;

/** A child resource a hosted controller manages: what it is, its informer, and how changed children update. */
public record ChildType(ApiResource resource, InformerLease informer, UpdateMethod updateMethod) {

  public ChildType {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(informer, "informer");
    Objects.requireNonNull(updateMethod, "updateMethod");
  }

  /** Whether a desired object of this apiVersion and kind belongs to this type. */
  public boolean accepts(String apiVersion, String kind) {
    return resource.apiVersion().equals(apiVersion) && resource.kind().equals(kind);
  }
}
