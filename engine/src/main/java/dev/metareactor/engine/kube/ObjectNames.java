package dev.metareactor.engine.kube;

import java.util.Optional;
import java.util.Set;

/**
 * The rules the API server holds an object's name and namespace to, checked before the engine writes anything, so
 * that a name the server would refuse is refused before any write of the answer that asked for it (a rename to an
 * invalid name must not delete the old object first) and no name can reach a URL as more than one path segment.
 *
 * <p>The rules, as Kubernetes' validation names them:
 * <ul>
 *   <li>{@link Rule#DNS1123_SUBDOMAIN} (at most 253 characters of lower-case letters, digits, {@code -} and
 *       {@code .}, starting and ending alphanumeric, each dot-separated part too): most resources, and every custom
 *       resource;</li>
 *   <li>{@link Rule#DNS1035_LABEL} (at most 63 of lower-case letters, digits and {@code -}, starting with a letter,
 *       ending alphanumeric): Services;</li>
 *   <li>{@link Rule#DNS1123_LABEL} (the same, but starting with a letter or a digit): Namespaces, and the namespace
 *       of every namespaced object;</li>
 *   <li>{@link Rule#PATH_SEGMENT} (anything but {@code .} and {@code ..}, without {@code /} and {@code %}): RBAC's
 *       Roles, ClusterRoles, RoleBindings and ClusterRoleBindings (whose names may hold {@code :}), and the
 *       certificates API's CertificateSigningRequests and ClusterTrustBundles, which the API server holds to no rule
 *       of its own.</li>
 * </ul>
 * Every name must be non-empty. Stateless and thread-safe.
 */
public final class ObjectNames {

  /** How much of a name a message shows (a hook may answer a name of any length). */
  private static final int SHOWN = 80;
  private static final int MAX_LABEL = 63;
  private static final int MAX_SUBDOMAIN = 253;

  private static final String RBAC = "rbac.authorization.k8s.io";
  private static final Set<String> RBAC_RESOURCES = Set.of("roles", "clusterroles", "rolebindings",
      "clusterrolebindings");
  private static final String CERTIFICATES = "certificates.k8s.io";
  private static final Set<String> CERTIFICATE_RESOURCES = Set.of("certificatesigningrequests",
      "clustertrustbundles");

  private ObjectNames() {}

  /** A naming rule of Kubernetes' validation. */
  public enum Rule {
    DNS1123_SUBDOMAIN("a DNS-1123 subdomain (at most 253 characters: lower-case letters, digits, '-' and '.', "
        + "starting and ending with a letter or digit)"),
    DNS1123_LABEL("a DNS-1123 label (at most 63 characters: lower-case letters, digits and '-', starting and "
        + "ending with a letter or digit)"),
    DNS1035_LABEL("a DNS-1035 label (at most 63 characters: lower-case letters, digits and '-', starting with a "
        + "letter and ending with a letter or digit)"),
    PATH_SEGMENT("a path segment (not '.' or '..', without '/' or '%')");

    private final String description;

    Rule(String description) {
      this.description = description;
    }

    /** What the rule asks for, for messages. */
    public String description() {
      return description;
    }

    /** What is wrong with {@code name} under this rule, or empty when it is valid. */
    public Optional<String> problem(String name) {
      if (name.isEmpty()) {
        return Optional.of("is empty");
      }
      return switch (this) {
        case DNS1123_SUBDOMAIN -> checked(name, MAX_SUBDOMAIN, subdomain(name));
        case DNS1123_LABEL -> checked(name, MAX_LABEL, label(name, 0, name.length(), true));
        case DNS1035_LABEL -> checked(name, MAX_LABEL, label(name, 0, name.length(), false));
        case PATH_SEGMENT -> name.equals(".") || name.equals("..") || name.contains("/") || name.contains("%")
            ? Optional.of("is not " + description) : Optional.empty();
      };
    }

    private Optional<String> checked(String name, int max, boolean wellFormed) {
      if (name.length() > max) {
        return Optional.of("is " + name.length() + " characters long, more than the " + max + " of " + description);
      }
      return wellFormed ? Optional.empty() : Optional.of("is not " + description);
    }
  }

  // Checked character by character, not with a regular expression: every desired object of every sync is checked,
  // and a matcher would allocate for each.

  /** Dot-separated DNS-1123 labels ({@code [a-z0-9]([-a-z0-9]*[a-z0-9])?}), of any length each. */
  private static boolean subdomain(String name) {
    int start = 0;
    for (int dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', start)) {
      if (!label(name, start, dot, true)) {
        return false;
      }
      start = dot + 1;
    }
    return label(name, start, name.length(), true);
  }

  /**
   * Whether {@code name[from, to)} is a label: lower-case letters, digits and {@code -}, starting with a letter (or,
   * {@code digitFirst}, a digit) and ending with a letter or a digit; its length is the caller's to check.
   */
  private static boolean label(String name, int from, int to, boolean digitFirst) {
    if (from >= to) {
      return false;
    }
    for (int i = from; i < to; i++) {
      char c = name.charAt(i);
      boolean letter = c >= 'a' && c <= 'z';
      boolean digit = c >= '0' && c <= '9';
      boolean allowed = i == from ? letter || digitFirst && digit
          : i == to - 1 ? letter || digit
          : letter || digit || c == '-';
      if (!allowed) {
        return false;
      }
    }
    return true;
  }

  /** The rule the API server holds names of {@code resource} to. */
  public static Rule ruleFor(ApiResource resource) {
    String group = resource.group();
    String plural = resource.resource();
    if (group.isEmpty() && plural.equals("services")) {
      return Rule.DNS1035_LABEL;
    }
    if (group.isEmpty() && plural.equals("namespaces")) {
      return Rule.DNS1123_LABEL;
    }
    if (group.equals(RBAC) && RBAC_RESOURCES.contains(plural)
        || group.equals(CERTIFICATES) && CERTIFICATE_RESOURCES.contains(plural)) {
      return Rule.PATH_SEGMENT;
    }
    return Rule.DNS1123_SUBDOMAIN;
  }

  /**
   * What is wrong with an object's name and namespace, or empty when the API server would take them.
   *
   * @param resource the object's resource, whose rule the name must follow ({@link #ruleFor})
   * @param namespace the object's namespace; {@code ""} for a cluster-scoped object
   * @return a message naming what is wrong and the rule ({@code name "Bad_Name" is not a DNS-1123 subdomain ...})
   */
  public static Optional<String> problem(ApiResource resource, String namespace, String name) {
    if (resource.namespaced()) {
      Optional<String> inNamespace = Rule.DNS1123_LABEL.problem(namespace);
      if (inNamespace.isPresent()) {
        return Optional.of("namespace " + shown(namespace) + " " + inNamespace.get());
      }
    }
    return ruleFor(resource).problem(name).map(problem -> "name " + shown(name) + " " + problem);
  }

  /** {@code value} quoted for a message, its start only when it is long (a hook may answer any length). */
  public static String shown(String value) {
    return value.length() <= SHOWN ? KubeJson.quote(value) : KubeJson.quote(value.substring(0, SHOWN)) + "...";
  }
}
