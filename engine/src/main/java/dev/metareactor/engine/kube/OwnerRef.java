package dev.metareactor.engine.kube;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One entry of {@code metadata.ownerReferences}.
 *
 * @param controller whether this owner is the object's controller ({@code controller: true}); at most one is
 */
public record OwnerRef(String apiVersion, String kind, String name, String uid, boolean controller,
    boolean blockOwnerDeletion) {

  /**
   * The ControllerRef a controller puts on what it owns: {@code owner} as controller, blocking the owner's
   * foreground deletion until the object is gone (what upstream and the built-in controllers write).
   */
  public static OwnerRef controllerOf(KubeObject owner) {
    return new OwnerRef(owner.apiVersion(), owner.kind(), owner.name(), owner.storedUid(), true, true);
  }

  /**
   * Adds {@code owner}'s ControllerRef ({@link #controllerOf}) to {@code object}'s {@code metadata.ownerReferences},
   * unless a reference to {@code owner} is there already, or {@code object} is in another namespace than a namespaced
   * {@code owner}: an owner reference cannot cross namespaces (the garbage collector looks the owner up in the
   * object's namespace, finds none and deletes the object), so such an object is tracked otherwise.
   *
   * @param object an object with a {@code metadata} object; changed in place
   */
  public static void addControllerTo(ObjectNode object, KubeObject owner) {
    ObjectNode metadata = (ObjectNode) object.get("metadata");
    String namespace = metadata.path("namespace").asString("");
    if (!owner.namespace().isEmpty() && !namespace.isEmpty() && !namespace.equals(owner.namespace())) {
      return;
    }
    ArrayNode refs = metadata.get("ownerReferences") instanceof ArrayNode existing ? existing
        : metadata.putArray("ownerReferences");
    for (JsonNode ref : refs) {
      if (owner.storedUid().equals(ref.path("uid").asString(null))) {
        return;
      }
    }
    controllerOf(owner).appendTo(refs);
  }

  /** Appends this reference to an {@code ownerReferences} list, in the API's field order. */
  public void appendTo(ArrayNode ownerReferences) {
    ownerReferences.addObject()
        .put("apiVersion", apiVersion)
        .put("kind", kind)
        .put("name", name)
        .put("uid", uid)
        .put("controller", controller)
        .put("blockOwnerDeletion", blockOwnerDeletion);
  }
}
