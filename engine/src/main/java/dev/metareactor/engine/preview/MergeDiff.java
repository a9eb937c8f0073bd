package dev.metareactor.engine.preview;

import java.util.Iterator;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The change between two versions of an object as a JSON merge patch (RFC 7386): applying {@link #of}'s result to
 * {@code before} gives {@code after}. Objects are compared field by field; arrays and values are replaced whole, as
 * a merge patch replaces them; a field that is gone is {@code null}.
 */
public final class MergeDiff {

  private MergeDiff() {
  }

  /**
   * The merge patch from {@code before} to {@code after}; an empty object when they are equal.
   */
  public static ObjectNode of(ObjectNode before, ObjectNode after) {
    ObjectNode patch = JsonNodeFactory.instance.objectNode();
    for (Map.Entry<String, JsonNode> field : before.properties()) {
      if (!after.has(field.getKey())) {
        patch.putNull(field.getKey());
      }
    }
    for (Map.Entry<String, JsonNode> field : after.properties()) {
      JsonNode was = before.get(field.getKey());
      JsonNode now = field.getValue();
      if (was == null || !was.equals(now)) {
        if (was instanceof ObjectNode wasObject && now instanceof ObjectNode nowObject) {
          patch.set(field.getKey(), of(wasObject, nowObject));
        } else {
          patch.set(field.getKey(), now.deepCopy());
        }
      }
    }
    return patch;
  }

  /**
   * A copy of {@code object} without what the API server maintains on every write and no writer chooses
   * ({@code metadata.resourceVersion}, {@code generation}, {@code managedFields}, and for a new object its
   * {@code uid} and {@code creationTimestamp}), so that a change shows only what the write changes.
   */
  public static @Nullable ObjectNode comparable(@Nullable ObjectNode object, boolean created) {
    if (object == null) {
      return null;
    }
    ObjectNode copy = object.deepCopy();
    if (copy.get("metadata") instanceof ObjectNode metadata) {
      metadata.remove("resourceVersion");
      metadata.remove("generation");
      metadata.remove("managedFields");
      if (created) {
        metadata.remove("uid");
        metadata.remove("creationTimestamp");
      }
    }
    return copy;
  }

  /** Whether {@code patch} sets nothing but {@code metadata.ownerReferences}. */
  static boolean onlyOwnerReferences(JsonNode patch) {
    Iterator<String> fields = patch.propertyNames().iterator();
    if (!fields.hasNext() || !fields.next().equals("metadata") || fields.hasNext()) {
      return false;
    }
    Iterator<String> metadata = patch.get("metadata").propertyNames().iterator();
    return metadata.hasNext() && metadata.next().equals("ownerReferences") && !metadata.hasNext();
  }
}
