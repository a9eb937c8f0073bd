package dev.metareactor.apply;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;

/**
 * Detects "associative lists" (lists Kubernetes treats as maps, such as containers or ports) by convention,
 * since a schemaless engine has no per-field merge configuration.
 *
 * <p>A list merges as a map only when every item of the observed, last-applied and desired lists is a JSON
 * object and all of those items have one of the {@link #CONVENTIONAL_KEYS} (presence is enough, even with a
 * null value). When several qualify, the first in that order wins: a port list keyed by both
 * {@code containerPort} and {@code name} merges by {@code containerPort}. Empty lists say nothing, so three
 * empty or absent lists are not associative.
 */
final class ListMapKey {

  /** The conventional merge keys, highest precedence first (Metacontroller's order). */
  static final List<String> CONVENTIONAL_KEYS =
      List.of("containerPort", "port", "mountPath", "name", "uid", "ip", "path");

  private ListMapKey() {}

  /** The merge key shared by every item of the given lists ({@code null} lists count as empty), or null. */
  static @Nullable String detect(@Nullable ArrayNode observed, @Nullable ArrayNode lastApplied,
      @Nullable ArrayNode desired) {
    int items = 0;
    for (ArrayNode list : new ArrayNode[] {observed, lastApplied, desired}) {
      if (list == null) {
        continue;
      }
      for (JsonNode item : list) {
        if (!item.isObject()) {
          return null;
        }
        items++;
      }
    }
    if (items == 0) {
      return null;
    }
    for (String key : CONVENTIONAL_KEYS) {
      if (allHave(key, observed) && allHave(key, lastApplied) && allHave(key, desired)) {
        return key;
      }
    }
    return null;
  }

  private static boolean allHave(String key, @Nullable ArrayNode list) {
    if (list == null) {
      return true;
    }
    for (JsonNode item : list) {
      if (!item.has(key)) {
        return false;
      }
    }
    return true;
  }

  /** Items keyed by their merge-key text; a later item with the same key replaces an earlier one. */
  static Map<String, JsonNode> index(String mergeKey, ArrayNode list) {
    Map<String, JsonNode> map = new HashMap<>(Math.max(16, list.size() * 2));
    for (JsonNode item : list) {
      map.put(keyOf(item.get(mergeKey)), item);
    }
    return map;
  }

  /** Whether two merge-key values are the same key, i.e. {@code keyOf(a).equals(keyOf(b))}, cheaply. */
  static boolean sameKey(JsonNode a, JsonNode b) {
    if (a != null && b != null) {
      if (a.isString() && b.isString()) {
        return a.stringValue().equals(b.stringValue());
      }
      if (a.isIntegralNumber() && b.isIntegralNumber() && a.canConvertToLong() && b.canConvertToLong()) {
        return a.longValue() == b.longValue();
      }
    }
    return keyOf(a).equals(keyOf(b));
  }

  /**
   * The text of a merge-key value as Go's {@code fmt.Sprintf("%v")} prints it, so that keys compare exactly as
   * in Metacontroller: a string as is, an integer in decimal, a float in Go's shortest form, null as
   * {@code <nil>}.
   */
  static String keyOf(@Nullable JsonNode value) {
    if (value == null || value.isNull() || value.isMissingNode()) {
      return "<nil>";
    }
    if (value.isString()) {
      return value.stringValue();
    }
    if (value.isNumber()) {
      if (value.isIntegralNumber() && value.canConvertToLong()) {
        return Long.toString(value.longValue());
      }
      return GoJson.goFormatV(value.doubleValue());
    }
    if (value.isBoolean()) {
      return value.booleanValue() ? "true" : "false";
    }
    // Objects and arrays as keys are nonsense in practice; any stable, distinct text keeps the merge total.
    return value.getNodeType() + ":" + GoJson.marshal(value);
  }
}
