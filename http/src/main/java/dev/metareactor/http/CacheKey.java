package dev.metareactor.http;

import java.util.Objects;

/**
 * The object a hook call is about (the parent, the decorator's target, the customize hook's parent): the key of its
 * ETag cache entry, as upstream ({@code kind}, {@code namespace}, {@code name}).
 *
 * @param kind the object's kind
 * @param namespace its namespace, empty for cluster-scoped objects
 * @param name its name
 */
public record CacheKey(String kind, String namespace, String name) {

  public CacheKey {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  @Override
  public String toString() {
    return kind + " " + (namespace.isEmpty() ? name : namespace + "/" + name);
  }
}
