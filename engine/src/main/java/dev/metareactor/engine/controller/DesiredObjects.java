package dev.metareactor.engine.controller;

import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.node.ObjectNode;

/**
 * Checks and completes what a hook asked for ({@code children}, {@code attachments}, {@code outputs}) before anything
 * is written: each object of a declared type; a namespaced object in its owner's namespace (filled in when absent;
 * required when the owner is cluster-scoped); a cluster-scoped object never owned by a namespaced owner; its name
 * and namespace as the API server would take them for its resource ({@link ObjectNames}); no two objects with the
 * same type and name. Any problem rejects the whole answer with a {@link HookResponseException} naming it, so nothing
 * of it is written (a rename to a name the server refuses does not delete the old object first).
 *
 * @param field the answer's field, {@code children}, {@code attachments} or {@code outputs}
 * @param ownerRole how messages call the owner, {@code parent} or {@code target}
 * @param declaredIn where the types are declared, for messages ({@code spec.childResources of CompositeController x})
 */
public record DesiredObjects(String field, String ownerRole, String declaredIn) {

  /** What a kind of controller adds to or checks on each desired object once its namespace is settled. */
  @FunctionalInterface
  public interface Completion {
    /**
     * @param metadata the object's metadata, to change in place
     * @param description {@code Kind namespace/name}, for messages
     * @throws HookResponseException to reject the answer
     */
    void complete(ObjectNode metadata, String description);
  }

  public DesiredObjects {
    Objects.requireNonNull(field, "field");
    Objects.requireNonNull(ownerRole, "ownerRole");
    Objects.requireNonNull(declaredIn, "declaredIn");
  }

  /**
   * @param objects the answer's objects, already checked for {@code apiVersion}, {@code kind} and a name
   * @param types the declared types
   * @param owner the parent or target
   * @param ownerResource its resource
   */
  public List<DesiredChild> check(List<ObjectNode> objects, List<ChildType> types, KubeObject owner,
      ApiResource ownerResource, Completion completion) {
    String ownerNamespace = owner.namespace();
    List<DesiredChild> desired = new ArrayList<>(objects.size());
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < objects.size(); i++) {
      ObjectNode object = objects.get(i).deepCopy();
      String apiVersion = object.get("apiVersion").stringValue();
      String kind = object.get("kind").stringValue();
      ChildType type = types.stream().filter(t -> t.accepts(apiVersion, kind)).findFirst()
          .orElseThrow(() -> new HookResponseException(field + ": " + kind + " " + apiVersion
              + " is not declared in " + declaredIn));
      ObjectNode metadata = (ObjectNode) object.get("metadata");
      String name = metadata.get("name").stringValue();
      String namespace = metadata.path("namespace").asString("");
      if (type.resource().namespaced()) {
        if (namespace.isEmpty()) {
          if (!ownerResource.namespaced()) {
            throw new HookResponseException(field + ": " + kind + " " + name + " has no metadata.namespace (its "
                + ownerRole + " is cluster-scoped, so the namespace cannot be inferred)");
          }
          metadata.put("namespace", ownerNamespace);
          namespace = ownerNamespace;
        } else if (ownerResource.namespaced() && !namespace.equals(ownerNamespace)) {
          throw new HookResponseException(field + ": " + kind + " " + name + " is in namespace " + namespace
              + " but its " + ownerRole + " is in " + ownerNamespace
              + " (an owner must be in the same namespace as what it owns)");
        }
      } else if (!namespace.isEmpty()) {
        metadata.remove("namespace");
        namespace = "";
      } else if (ownerResource.namespaced()) {
        throw new HookResponseException(field + ": cluster-scoped " + kind + " " + name
            + " cannot be owned by a namespaced " + ownerRole);
      }
      String description = kind + " " + KubeObject.namespacedName(namespace, name);
      Optional<String> badName = ObjectNames.problem(type.resource(), namespace, name);
      if (badName.isPresent()) {
        throw new HookResponseException(field + "[" + i + "]: " + kind + " " + badName.get()
            + "; the API server would refuse it, so nothing of this answer is written");
      }
      completion.complete(metadata, description);
      Integer previous = seen.put(apiVersion + " " + kind + " " + namespace + "/" + name, i);
      if (previous != null) {
        throw new HookResponseException(field + "[" + previous + "] and " + field + "[" + i + "] are both "
            + description);
      }
      desired.add(new DesiredChild(type, object));
    }
    return desired;
  }
}
