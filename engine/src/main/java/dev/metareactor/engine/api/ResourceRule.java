package dev.metareactor.engine.api;

import java.util.Objects;

/**
 * A resource a controller names: {@code apiVersion} ({@code apps/v1}, {@code v1}) and plural {@code resource}.
 */
public record ResourceRule(String apiVersion, String resource) {

  public ResourceRule {
    Objects.requireNonNull(apiVersion, "apiVersion");
    Objects.requireNonNull(resource, "resource");
  }

  /** The API group: empty for the core group. */
  public String group() {
    int slash = apiVersion.indexOf('/');
    return slash < 0 ? "" : apiVersion.substring(0, slash);
  }

  @Override
  public String toString() {
    return resource + " (" + apiVersion + ")";
  }
}
