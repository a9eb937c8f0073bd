package dev.metareactor.apply;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Hands a child written by dynamic apply over to server-side apply, so that the first apply owns what dynamic apply
 * had applied and a field the hook later drops is removed, as dynamic apply would have removed it.
 *
 * <p>Without it, the fields dynamic apply wrote stay owned by its {@code Update} entry in {@code managedFields}
 * (the API server names it after the writer: {@code metacontroller} for Metacontroller, {@code metareactor} for
 * this engine), so a field the hook stops asking for is never removed: its other owner keeps it (Kubernetes issue
 * 99003). The handover moves, within {@code managedFields}, the paths of those entries that the last-applied
 * annotation holds — exactly what dynamic apply applied, not the server's defaults a create also records — into the
 * manager's {@code Apply} entry, keeps the rest where it was, and removes the annotation, which server-side apply
 * does not use. It is one JSON patch that also replaces {@code metadata.resourceVersion}, so it fails with a conflict
 * (HTTP 409) if the object changed since it was read, and never loses another writer's change.
 *
 * <p>Stateless and thread-safe.
 */
public final class OwnershipHandover {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final List<String> ANNOTATION_PATH = List.of("metadata", "annotations",
      LastAppliedConfiguration.ANNOTATION);

  private OwnershipHandover() {}

  /**
   * The JSON patch handing {@code live} over to {@code manager}.
   *
   * @param live the object as the API server has it, {@code managedFields} included
   * @param formerManagers the managers whose {@code Update} entries hold what dynamic apply wrote
   * @param manager the server-side apply field manager
   * @return the patch, or empty when the object has no last-applied annotation (nothing to hand over)
   * @throws ApplyException when the annotation is not JSON, or {@code managedFields} is malformed
   */
  public static Optional<ArrayNode> patch(ObjectNode live, Set<String> formerManagers, String manager) {
    Objects.requireNonNull(formerManagers, "formerManagers");
    Objects.requireNonNull(manager, "manager");
    JsonNode applied = LastAppliedConfiguration.read(live);
    if (applied == null) {
      return Optional.empty();
    }
    JsonNode entries = live.path("metadata").path("managedFields");
    ArrayNode handedOver = NODES.arrayNode();
    FieldSet moved = FieldSet.empty();
    ObjectNode applyEntry = null;
    String movedTime = null;
    for (JsonNode entry : entries) {
      if (!entry.isObject()) {
        throw new ApplyException("managedFields holds an entry that is not an object");
      }
      ObjectNode copy = ((ObjectNode) entry).deepCopy();
      boolean mainResource = entry.path("subresource").asString("").isEmpty();
      String operation = entry.path("operation").asString("");
      String owner = entry.path("manager").asString("");
      JsonNode fields = entry.get("fieldsV1");
      if (mainResource && operation.equals("Update") && formerManagers.contains(owner) && fields != null) {
        FieldSet set = FieldSet.of(fields);
        moved = moved.union(set.within(applied));
        movedTime = entry.path("time").asString(movedTime);
        FieldSet kept = set.outside(applied).without(ANNOTATION_PATH);
        if (kept.isEmpty()) {
          continue;
        }
        copy.set("fieldsV1", kept.toJson());
      } else if (mainResource && operation.equals("Apply") && owner.equals(manager)) {
        applyEntry = copy;
      }
      handedOver.add(copy);
    }
    if (!moved.isEmpty()) {
      if (applyEntry == null) {
        applyEntry = handedOver.addObject()
            .put("manager", manager)
            .put("operation", "Apply")
            .put("apiVersion", live.path("apiVersion").asString(""))
            .put("fieldsType", "FieldsV1");
        if (movedTime != null) {
          applyEntry.put("time", movedTime);
        }
        applyEntry.set("fieldsV1", moved.toJson());
      } else {
        JsonNode fields = applyEntry.get("fieldsV1");
        applyEntry.set("fieldsV1", (fields == null ? moved : FieldSet.of(fields).union(moved)).toJson());
      }
    }
    ArrayNode patch = NODES.arrayNode();
    patch.addObject().put("op", "replace").put("path", "/metadata/managedFields").set("value", handedOver);
    patch.addObject().put("op", "replace").put("path", "/metadata/resourceVersion")
        .put("value", live.path("metadata").path("resourceVersion").asString(""));
    patch.addObject().put("op", "remove")
        .put("path", "/metadata/annotations/" + LastAppliedConfiguration.ANNOTATION.replace("~", "~0")
            .replace("/", "~1"));
    return Optional.of(patch);
  }
}
