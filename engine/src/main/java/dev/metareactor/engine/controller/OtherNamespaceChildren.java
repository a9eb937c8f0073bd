package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.node.ObjectNode;

/**
 * How the engine marks and finds the children of a namespaced parent that live in another namespace
 * ({@link dev.metareactor.engine.api.CrossNamespaceChildren}): an owner reference cannot cross namespaces (the
 * garbage collector would find no owner in the child's namespace and delete it), so such a child carries no
 * ControllerRef but the label {@value #PARENT_UID_LABEL} with the parent's UID, which the child informers' label
 * index finds without a scan, and two annotations for routing and for people: {@value #PARENT_ANNOTATION}
 * ({@code namespace/name} of the parent) and {@value #CONTROLLER_ANNOTATION} ({@code CompositeController/<name>}).
 * These keys are the engine's: set on every child in another namespace whatever the hook says, and dropped from the
 * hook's children in the parent's own namespace.
 *
 * <p>An instance is one controller's setting: which other namespaces its answers may name, checked and marked by
 * {@link DesiredObjects}; {@link #OFF} (every controller without the annotation, every DecoratorController and
 * MapController) refuses them and marks nothing, exactly as before the annotation existed.
 *
 * <p>The label is the mark of ownership, as a ControllerRef is: whoever may label an object in an allowed namespace
 * may hand it to a parent, as whoever may write its owner references may; the engine itself never adds the label to
 * an object it did not create (no adoption across namespaces).
 */
public final class OtherNamespaceChildren {

  /** The label naming the parent's UID. */
  public static final String PARENT_UID_LABEL = "metareactor.dev/parent-uid";
  /** The annotation naming the parent, {@code namespace/name}. */
  public static final String PARENT_ANNOTATION = "metareactor.dev/parent";
  /** The annotation naming the controller, {@code CompositeController/<name>}. */
  public static final String CONTROLLER_ANNOTATION = "metareactor.dev/controller";

  /** The parent a child in another namespace names: its namespace, name and UID. */
  public record ParentRef(String namespace, String name, String uid) {
    public ParentRef {
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(uid, "uid");
    }
  }

  /** No child in another namespace: the owner's namespace only. */
  public static final OtherNamespaceChildren OFF =
      new OtherNamespaceChildren(CrossNamespaceChildren.OFF, "", "");

  private final CrossNamespaceChildren allowed;
  /** {@code CompositeController/<name>}. */
  private final String controller;
  /** {@code CompositeController <name>}, for messages. */
  private final String described;

  /**
   * @param allowed the namespaces the controller's annotation allows
   * @param controllerKind {@code CompositeController}
   * @param controllerName the controller object's name
   */
  public OtherNamespaceChildren(CrossNamespaceChildren allowed, String controllerKind, String controllerName) {
    this.allowed = Objects.requireNonNull(allowed, "allowed");
    this.controller = controllerKind + "/" + controllerName;
    this.described = controllerKind + " " + controllerName;
  }

  /** Whether the controller may have children in other namespaces: then it tracks them and finalizes its parents. */
  public boolean enabled() {
    return allowed.enabled();
  }

  /**
   * Checks that a desired child of {@code type} may be in {@code namespace}, another namespace than its namespaced
   * owner's {@code ownerNamespace}.
   *
   * @param where {@code children: Kind name}, for the message
   * @throws HookResponseException saying why not
   */
  void check(ChildType type, String namespace, String ownerNamespace, String ownerRole, String where) {
    String refused = where + " is in namespace " + namespace + " but its " + ownerRole + " is in " + ownerNamespace;
    if (!allowed.enabled()) {
      throw new HookResponseException(refused + " (an owner must be in the same namespace as what it owns)");
    }
    if (!allowed.allows(namespace)) {
      throw new HookResponseException(refused + ", which " + described + " does not allow ("
          + CrossNamespaceChildren.KEY + ": \"" + allowed + "\"); nothing of this answer is written");
    }
    if (type.updateMethod().rolling()) {
      throw new HookResponseException(refused + ": children of a rolling update rule (" + type.updateMethod()
          + ") stay in their " + ownerRole + "'s namespace; nothing of this answer is written");
    }
  }

  /**
   * Marks a checked desired child as {@code owner}'s when it is in another namespace, and removes the marks a hook
   * gave one in the owner's namespace; nothing when the controller has no children elsewhere.
   */
  void complete(DesiredObjects desiredObjects, ObjectNode metadata, KubeObject owner, String description) {
    if (!allowed.enabled()) {
      return;
    }
    if (elsewhere(owner, metadata.path("namespace").asString(""))) {
      desiredObjects.setEngineKey(metadata, "labels", PARENT_UID_LABEL, owner.storedUid(), description);
      desiredObjects.setEngineKey(metadata, "annotations", PARENT_ANNOTATION, owner.namespacedName(), description);
      desiredObjects.setEngineKey(metadata, "annotations", CONTROLLER_ANNOTATION, controller, description);
    } else {
      if (metadata.get("labels") instanceof ObjectNode labels) {
        labels.remove(PARENT_UID_LABEL);
      }
      if (metadata.get("annotations") instanceof ObjectNode annotations) {
        annotations.remove(List.of(PARENT_ANNOTATION, CONTROLLER_ANNOTATION));
      }
    }
  }

  /** Whether {@code child}, of a namespaced resource, would be in another namespace than its namespaced parent. */
  public static boolean elsewhere(KubeObject parent, String childNamespace) {
    return !parent.namespace().isEmpty() && !childNamespace.isEmpty() && !childNamespace.equals(parent.namespace());
  }

  /** Whether {@code object} is a child of {@code parent} in another namespace, by the label. */
  public static boolean trackedBy(KubeObject object, KubeObject parent) {
    return elsewhere(parent, object.namespace()) && parent.storedUid().equals(object.labels().get(PARENT_UID_LABEL));
  }

  /** The cached children of {@code parent} in other namespaces, from the informer's label index. */
  public static List<KubeObject> trackedIn(InformerLease informer, KubeObject parent) {
    return informer.labelled(PARENT_UID_LABEL, parent.storedUid()).stream()
        .filter(child -> elsewhere(parent, child.namespace()))
        .toList();
  }

  /** The parent {@code child} names by its label and annotation, if it carries both. */
  public static Optional<ParentRef> parentOf(KubeObject child) {
    String uid = child.labels().get(PARENT_UID_LABEL);
    String parent = child.annotations().get(PARENT_ANNOTATION);
    if (uid == null || uid.isEmpty() || parent == null) {
      return Optional.empty();
    }
    int slash = parent.indexOf('/');
    if (slash <= 0 || slash == parent.length() - 1) {
      return Optional.empty();
    }
    return Optional.of(new ParentRef(parent.substring(0, slash), parent.substring(slash + 1), uid));
  }
}
