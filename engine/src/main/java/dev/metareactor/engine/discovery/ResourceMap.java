package dev.metareactor.engine.discovery;

import dev.metareactor.engine.kube.ApiResource;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** An immutable snapshot of discovery: lookups by (apiVersion, resource) and (apiVersion, kind). */
public final class ResourceMap {

  private static final ResourceMap EMPTY = new ResourceMap(Map.of(), Map.of());

  private final Map<String, ApiResource> byResource;
  private final Map<String, ApiResource> byKind;

  private ResourceMap(Map<String, ApiResource> byResource, Map<String, ApiResource> byKind) {
    this.byResource = byResource;
    this.byKind = byKind;
  }

  public static ResourceMap empty() {
    return EMPTY;
  }

  public static ResourceMap of(Collection<ApiResource> resources) {
    Map<String, ApiResource> byResource = new HashMap<>();
    Map<String, ApiResource> byKind = new HashMap<>();
    for (ApiResource resource : resources) {
      byResource.put(key(resource.apiVersion(), resource.resource()), resource);
      byKind.putIfAbsent(key(resource.apiVersion(), resource.kind()), resource);
    }
    return new ResourceMap(Map.copyOf(byResource), Map.copyOf(byKind));
  }

  public Optional<ApiResource> byResource(String apiVersion, String resource) {
    return Optional.ofNullable(byResource.get(key(apiVersion, resource)));
  }

  public Optional<ApiResource> byKind(String apiVersion, String kind) {
    return Optional.ofNullable(byKind.get(key(apiVersion, kind)));
  }

  public Collection<ApiResource> all() {
    return byResource.values();
  }

  public int size() {
    return byResource.size();
  }

  private static String key(String apiVersion, String name) {
    return apiVersion + "\u0000" + name;
  }
}
