package dev.metareactor.engine.kube;

/**
 * Comparing resourceVersions. The API calls them opaque, but every one this engine sees comes from etcd's revision
 * counter, so within one resource they are integers that grow with each change; the engine compares them only to
 * tell whether a cache has caught up with a write, and treats what it cannot read as holding nothing back.
 */
public final class ResourceVersions {

  private ResourceVersions() {}

  /**
   * Whether resourceVersion {@code a} is newer than {@code b}, both read as the integers etcd makes them; never
   * when either is not one (it cannot be compared, so it holds nothing back).
   */
  public static boolean newer(String a, String b) {
    try {
      return Long.parseLong(a) > Long.parseLong(b);
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
