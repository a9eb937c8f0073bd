package dev.metareactor.engine.hook;

import dev.metareactor.engine.api.HookSpec.HookVersion;

/**
 * How hook requests key objects, exactly as Metacontroller does.
 *
 * <p>Groups are keyed {@code Kind.version} for the core group ({@code Pod.v1}) and {@code Kind.group/version}
 * otherwise ({@code Deployment.apps/v1}). Objects within a group are keyed, in {@code v1}, by name, or by
 * {@code namespace/name} when the parent is cluster-scoped and the object namespaced; in {@code v2}, by
 * {@code namespace/name} for every namespaced object and by name for cluster-scoped ones.
 */
public final class ObjectMapKeys {

  private ObjectMapKeys() {}

  /** The group key for objects of {@code kind} in {@code apiVersion}. */
  public static String groupKey(String kind, String apiVersion) {
    return kind + "." + apiVersion;
  }

  /** The key of one object in its group. */
  public static String objectKey(HookVersion version, boolean parentNamespaced, String namespace, String name) {
    boolean objectNamespaced = namespace != null && !namespace.isEmpty();
    if (!objectNamespaced) {
      return name;
    }
    if (version == HookVersion.V2 || !parentNamespaced) {
      return namespace + "/" + name;
    }
    return name;
  }
}
