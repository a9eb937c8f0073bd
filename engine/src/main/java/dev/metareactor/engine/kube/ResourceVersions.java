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

  /**
   * {@code resourceVersion} as the integer it spells, when it spells one the way etcd writes them (decimal digits, no
   * sign, no leading zero), or -1: so that a version can be kept as a {@code long} and told equal to another without
   * keeping its String. Allocates nothing.
   */
  public static long canonicalInteger(String resourceVersion) {
    int length = resourceVersion.length();
    if (length == 0 || length > 18 || length > 1 && resourceVersion.charAt(0) == '0') {
      return -1; // 18 digits cannot overflow a long
    }
    long value = 0;
    for (int i = 0; i < length; i++) {
      char digit = resourceVersion.charAt(i);
      if (digit < '0' || digit > '9') {
        return -1;
      }
      value = value * 10 + (digit - '0');
    }
    return value;
  }
}
