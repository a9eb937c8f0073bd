package dev.metareactor.apply;

import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
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

  /** Lists up to this size are compared pairwise instead of through an index. */
  private static final int SMALL_LIST = 16;

  /** Index markers, compared by identity: a desired item already paired, an observed item nobody desires. */
  private static final JsonNode MATCHED = JsonNodeFactory.instance.objectNode();
  private static final JsonNode FOREIGN = JsonNodeFactory.instance.objectNode();

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

  private static boolean metadataUnchanged(@Nullable JsonNode observed, JsonNode desired) {
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

  private static boolean valueUnchanged(@Nullable JsonNode observed, JsonNode desired) {
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
   * desired item has exactly one observed item with the same key that it leaves unchanged, and no key repeats
   * anywhere (the merge rewrites every copy of a repeated observed key with the last copy).
   */
  private static boolean listMapUnchanged(String mergeKey, JsonNode observed, JsonNode desired) {
    if (desired.size() <= SMALL_LIST && observed.size() <= 2 * SMALL_LIST) {
      return smallListMapUnchanged(mergeKey, observed, desired);
    }
    Map<String, JsonNode> seen = new HashMap<>(Math.max(16, (desired.size() + observed.size()) * 2));
    for (JsonNode item : desired) {
      if (seen.put(ListMapKey.keyOf(item.get(mergeKey)), item) != null) {
        return false;
      }
    }
    int matched = 0;
    for (JsonNode item : observed) {
      String key = ListMapKey.keyOf(item.get(mergeKey));
      JsonNode want = seen.get(key);
      if (want == MATCHED || want == FOREIGN) {
        return false;
      }
      if (want == null) {
        seen.put(key, FOREIGN); // an item someone else added: the merge keeps it
        continue;
      }
      if (!valueUnchanged(item, want)) {
        return false;
      }
      seen.put(key, MATCHED);
      matched++;
    }
    return matched == desired.size();
  }

  /** The same decision by pairwise comparison: no index, no key strings, nothing allocated. */
  private static boolean smallListMapUnchanged(String mergeKey, JsonNode observed, JsonNode desired) {
    for (int i = 0; i < observed.size(); i++) {
      JsonNode key = observed.get(i).get(mergeKey);
      for (int j = 0; j < i; j++) {
        if (ListMapKey.sameKey(key, observed.get(j).get(mergeKey))) {
          return false;
        }
      }
    }
    for (int i = 0; i < desired.size(); i++) {
      JsonNode want = desired.get(i);
      JsonNode key = want.get(mergeKey);
      for (int j = 0; j < i; j++) {
        if (ListMapKey.sameKey(key, desired.get(j).get(mergeKey))) {
          return false;
        }
      }
      JsonNode match = null;
      for (JsonNode item : observed) {
        if (ListMapKey.sameKey(key, item.get(mergeKey))) {
          match = item;
          break;
        }
      }
      if (match == null || !valueUnchanged(match, want)) {
        return false;
      }
    }
    return true;
  }
}
