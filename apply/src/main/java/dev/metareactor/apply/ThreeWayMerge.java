package dev.metareactor.apply;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The three-way merge at the heart of dynamic apply: applies the change from {@code lastApplied} to
 * {@code desired} onto {@code destination} (a private copy of the observed object), so that fields the controller
 * stopped asking for are removed, fields it asks for are set, and fields nobody asked for are kept.
 *
 * <p>Which branch runs is decided by the type of the destination value, as in Metacontroller:
 * <ul>
 *   <li><b>object</b>: members of last-applied that desired no longer has are deleted, then every member of
 *       desired is merged recursively. If desired is not an object here, it is ignored and only the deletions
 *       happen (Metacontroller's accidental but stable behaviour, kept on purpose: see the module README);</li>
 *   <li><b>array</b>: merged item by item as a map when {@link ListMapKey} finds a conventional merge key, else
 *       replaced by the desired value;</li>
 *   <li><b>anything else</b> (scalar, null, absent): the desired value.</li>
 * </ul>
 *
 * <p>Desired values are copied into the destination, never shared, so the result can be mutated safely.
 */
final class ThreeWayMerge {

  private ThreeWayMerge() {}

  /** Merges and returns the new value for the destination slot (which may be the mutated destination). */
  static JsonNode merge(@Nullable JsonNode destination, @Nullable JsonNode lastApplied, JsonNode desired) {
    if (destination != null && destination.isObject()) {
      mergeObject((ObjectNode) destination, asObject(lastApplied), asObject(desired));
      return destination;
    }
    if (destination != null && destination.isArray()) {
      return mergeArray((ArrayNode) destination, asArray(lastApplied), desired);
    }
    return copyOf(desired);
  }

  static void mergeObject(ObjectNode destination, @Nullable ObjectNode lastApplied,
      @Nullable ObjectNode desired) {
    if (lastApplied != null) {
      for (String key : lastApplied.propertyNames()) {
        if (desired == null || !desired.has(key)) {
          destination.remove(key);
        }
      }
    }
    if (desired != null) {
      for (Map.Entry<String, JsonNode> member : desired.properties()) {
        String key = member.getKey();
        JsonNode last = lastApplied == null ? null : lastApplied.get(key);
        JsonNode current = destination.get(key);
        JsonNode merged = merge(current, last, member.getValue());
        if (merged != current) {
          destination.set(key, merged);
        }
      }
    }
  }

  private static JsonNode mergeArray(ArrayNode destination, @Nullable ArrayNode lastApplied, JsonNode desired) {
    if (!desired.isArray() && !desired.isNull()) {
      // Metacontroller writes null (or prunes the list) when a scalar or object is desired where an array is
      // observed, and only reaches the desired value on the sync after. Writing it at once converges in one
      // update instead of two; the module README explains why this quirk alone is not kept.
      return copyOf(desired);
    }
    ArrayNode desiredList = asArray(desired);
    String mergeKey = ListMapKey.detect(destination, lastApplied, desiredList);
    if (mergeKey != null) {
      return mergeListMap(mergeKey, destination, lastApplied, desiredList);
    }
    return copyOf(desired);
  }

  /**
   * Treats the three lists as maps keyed by the merge key, merges those maps like objects, and turns the result
   * back into a list: first the surviving items in observed order, then new items in desired order.
   */
  private static ArrayNode mergeListMap(String mergeKey, ArrayNode destination,
      @Nullable ArrayNode lastApplied, @Nullable ArrayNode desired) {
    Map<String, JsonNode> destinationMap = ListMapKey.index(mergeKey, destination);
    Map<String, JsonNode> lastMap = lastApplied == null ? Map.of() : ListMapKey.index(mergeKey, lastApplied);
    Map<String, JsonNode> desiredMap = desired == null ? Map.of() : ListMapKey.index(mergeKey, desired);

    for (String key : lastMap.keySet()) {
      if (!desiredMap.containsKey(key)) {
        destinationMap.remove(key);
      }
    }
    for (Map.Entry<String, JsonNode> item : desiredMap.entrySet()) {
      String key = item.getKey();
      destinationMap.put(key, merge(destinationMap.get(key), lastMap.get(key), item.getValue()));
    }

    ArrayNode result = JsonNodeFactory.instance.arrayNode(destinationMap.size());
    Set<String> added = new HashSet<>(destinationMap.size() * 2);
    // Existing items keep their observed order. An observed list with a repeated key yields the merged item at
    // each position, as Metacontroller does, so such lists do not look changed on every sync.
    for (JsonNode item : destination) {
      String key = ListMapKey.keyOf(item.get(mergeKey));
      JsonNode merged = destinationMap.get(key);
      if (merged != null) {
        result.add(added.add(key) ? merged : merged.deepCopy());
      }
    }
    if (desired != null) {
      for (JsonNode item : desired) {
        String key = ListMapKey.keyOf(item.get(mergeKey));
        if (added.add(key)) {
          result.add(destinationMap.get(key));
        }
      }
    }
    return result;
  }

  private static @Nullable ObjectNode asObject(@Nullable JsonNode node) {
    return node != null && node.isObject() ? (ObjectNode) node : null;
  }

  private static @Nullable ArrayNode asArray(@Nullable JsonNode node) {
    return node != null && node.isArray() ? (ArrayNode) node : null;
  }

  private static JsonNode copyOf(@Nullable JsonNode desired) {
    if (desired == null) {
      return JsonNodeFactory.instance.nullNode();
    }
    return desired.isContainer() ? desired.deepCopy() : desired;
  }
}
