package dev.metareactor.apply;

import java.util.HashMap;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * A read-only test for the steady state of a child: the observed last-applied annotation already equals the
 * new desired object, so the three-way merge reduces to "set every desired field", and nothing changes when
 * every desired field already holds its value.
 *
 * <p>The answer is conservative: {@code true} only when the full merge would certainly leave the object as
 * observed; any shape it does not decide cheaply (a null desired over a list, repeated merge keys) answers
 * {@code false} and lets {@link DynamicApply} run the full merge. It allocates nothing for objects and scalars,
 * and one index per associative list.
 */
final class SteadyState {

  /** Marks a desired list item already paired with an observed one; compared by identity. */
  private static final JsonNode MATCHED = JsonNodeFactory.instance.objectNode();

  private SteadyState() {}

  /** Whether merging {@code desired} (equal to last-applied) into {@code observed} changes nothing. */
  static boolean unchanged(JsonNode observed, JsonNode desired) {
    for (Map.Entry<String, JsonNode> member : desired.properties()) {
      String key = member.getKey();
      JsonNode value = member.getValue();
      if (key.equals("status")) {
        continue; // status is always restored from observed
      }
      if (key.equals("metadata") && value.isObject()) {
        if (!metadataUnchanged(observed.get("metadata"), value)) {
          return false;
        }
      } else if (!valueUnchanged(observed.get(key), value)) {
        return false;
      }
    }
    return true;
  }

  private static boolean metadataUnchanged(JsonNode observed, JsonNode desired) {
    if (observed == null || !observed.isObject()) {
      return false;
    }
    for (Map.Entry<String, JsonNode> member : desired.properties()) {
      String key = member.getKey();
      if (DynamicApply.SYSTEM_METADATA_FIELDS.contains(key)) {
        continue; // restored from observed after the merge
      }
      if (!valueUnchanged(observed.get(key), member.getValue())) {
        return false;
      }
    }
    return true;
  }

  private static boolean valueUnchanged(JsonNode observed, JsonNode desired) {
    if (observed != null && observed.isObject()) {
      if (!desired.isObject()) {
        // The merge ignores a non-object desired over an object; with last-applied equal to desired there is
        // nothing to prune either.
        return true;
      }
      for (Map.Entry<String, JsonNode> member : desired.properties()) {
        if (!valueUnchanged(observed.get(member.getKey()), member.getValue())) {
          return false;
        }
      }
      return true;
    }
    if (observed != null && observed.isArray()) {
      if (!desired.isArray()) {
        return false;
      }
      String mergeKey = ListMapKey.detect((ArrayNode) observed, null, (ArrayNode) desired);
      return mergeKey == null ? JsonEquality.equal(observed, desired) : listMapUnchanged(mergeKey, observed, desired);
    }
    return JsonEquality.equal(observed, desired);
  }

  /**
   * Items merge by key; observed items desired does not name are kept where they are. Unchanged when every
   * desired item has an observed item with the same key that it leaves unchanged, and no key repeats (the merge
   * would rewrite every copy of a repeated key with the same item).
   */
  private static boolean listMapUnchanged(String mergeKey, JsonNode observed, JsonNode desired) {
    Map<String, JsonNode> wanted = new HashMap<>(Math.max(16, desired.size() * 2));
    for (JsonNode item : desired) {
      if (wanted.put(ListMapKey.keyOf(item.get(mergeKey)), item) != null) {
        return false;
      }
    }
    int matched = 0;
    for (JsonNode item : observed) {
      String key = ListMapKey.keyOf(item.get(mergeKey));
      JsonNode want = wanted.get(key);
      if (want == null) {
        continue; // an item someone else added: the merge keeps it
      }
      if (want == MATCHED || !valueUnchanged(item, want)) {
        return false;
      }
      wanted.put(key, MATCHED);
      matched++;
    }
    return matched == wanted.size();
  }
}
