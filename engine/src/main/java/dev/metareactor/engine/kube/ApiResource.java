package dev.metareactor.engine.kube;

import java.util.Objects;
import java.util.Set;

/**
 * One served resource as API discovery describes it.
 *
 * @param group API group, empty for the core group
 * @param version API version within the group
 * @param resource plural resource name ({@code deployments})
 * @param kind object kind ({@code Deployment})
 * @param namespaced whether objects live in namespaces
 * @param subresources served subresources ({@code status}, {@code scale})
 */
public record ApiResource(String group, String version, String resource, String kind, boolean namespaced,
    Set<String> subresources) {

  public ApiResource {
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(kind, "kind");
    subresources = Set.copyOf(subresources);
  }

  /** The group of an {@code apiVersion} ({@code apps/v1} -> {@code apps}, {@code v1} -> the core group, empty). */
  public static String groupOf(String apiVersion) {
    int slash = apiVersion == null ? -1 : apiVersion.indexOf('/');
    return slash < 0 ? "" : apiVersion.substring(0, slash);
  }

  /** {@code group/version}, or just {@code version} for the core group. */
  public String apiVersion() {
    return group.isEmpty() ? version : group + "/" + version;
  }

  public boolean hasStatusSubresource() {
    return subresources.contains("status");
  }


  /** {@code resource.group} (or just {@code resource} for the core group), as kubectl and logs name it. */
  @Override
  public String toString() {
    return (group.isEmpty() ? resource : resource + "." + group) + "/" + version;
  }
}
