package dev.metareactor.engine.api;

import dev.metareactor.engine.kube.ObjectNames;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code metareactor.dev/cross-namespace-children} on a CompositeController (upstream issues 236 and 238): the
 * namespaces, beside its own, where a namespaced parent's sync hook may ask for namespaced children. The value is a
 * comma-separated list of namespace names ({@code "team-a-shared, monitoring"}), or {@code "*"} (or {@code "true"})
 * for any namespace; {@code "false"}, an empty value or no annotation: none, as upstream (a child in another namespace
 * refuses the answer whole). {@code "true"} and {@code "false"} are read as switches, never as namespace names. Such
 * children cannot carry a ControllerRef (owner references do not cross namespaces), so the engine tracks them by a
 * label and deletes them itself when the parent goes. A change restarts the controller, as a change of its spec does.
 *
 * @param any whether every namespace is allowed
 * @param namespaces the namespaces allowed, when not {@code any}; empty when the annotation is off
 */
public record CrossNamespaceChildren(boolean any, Set<String> namespaces) {

  /** The annotation's key. */
  public static final String KEY = "metareactor.dev/cross-namespace-children";

  /** Off: children stay in their parent's namespace. */
  public static final CrossNamespaceChildren OFF = new CrossNamespaceChildren(false, Set.of());

  public CrossNamespaceChildren {
    namespaces = Set.copyOf(namespaces);
  }

  /**
   * The controller's setting.
   *
   * @throws InvalidControllerException naming the annotation when a listed namespace is not a valid namespace name
   */
  public static CrossNamespaceChildren of(Map<String, String> annotations) {
    String value = annotations.get(KEY);
    if (value == null) {
      return OFF;
    }
    String stripped = value.strip();
    if (stripped.equals("*") || stripped.equals("true")) {
      return new CrossNamespaceChildren(true, Set.of());
    }
    if (stripped.isEmpty() || stripped.equals("false")) {
      return OFF;
    }
    Set<String> namespaces = new TreeSet<>();
    for (String part : stripped.split(",", -1)) {
      String namespace = part.strip();
      Optional<String> problem = ObjectNames.Rule.DNS1123_LABEL.problem(namespace);
      if (problem.isPresent()) {
        throw new InvalidControllerException("metadata.annotations[" + KEY + "]: must be \"*\" or a comma-separated"
            + " list of namespace names, but " + ObjectNames.shown(namespace) + " " + problem.get());
      }
      namespaces.add(namespace);
    }
    return new CrossNamespaceChildren(false, namespaces);
  }

  /** Whether children may be anywhere but their parent's namespace. */
  public boolean enabled() {
    return any || !namespaces.isEmpty();
  }

  /** Whether a child of a parent in another namespace may be in {@code namespace}. */
  public boolean allows(String namespace) {
    return any || namespaces.contains(namespace);
  }

  /** The annotation as it allows, for messages: {@code "*"} or the sorted list. */
  @Override
  public String toString() {
    return any ? "*" : String.join(",", new TreeSet<>(namespaces));
  }
}
