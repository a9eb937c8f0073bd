package dev.metareactor.apply;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The fields one manager owns in an object, as the API server records them in a {@code managedFields} entry's
 * {@code fieldsV1}: a tree whose keys are path elements — {@code f:<name>} a field of an object, {@code k:<json>} the
 * item of an associative list whose key fields have those values, {@code v:<json>} an item of a set, {@code i:<n>}
 * the n-th item of a list, and {@code .} the node itself (present when the node is owned as well as some of its
 * children). A path is owned when its node is a leaf ({@code {}}) or carries {@code .}.
 *
 * <p>No schema is needed to read it: the set itself says which lists are associative (their items are {@code k:}
 * elements, and the key fields are in each element), which are sets ({@code v:}) and which are atomic (a leaf).
 *
 * <p>Immutable; operations return new sets. Thread-safe.
 */
public final class FieldSet {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String SELF = ".";

  private final ObjectNode tree;

  private FieldSet(ObjectNode tree) {
    this.tree = tree;
  }

  /**
   * A set read from a {@code fieldsV1} value.
   *
   * @throws ApplyException when it is not a JSON object of objects
   */
  public static FieldSet of(JsonNode fieldsV1) {
    Objects.requireNonNull(fieldsV1, "fieldsV1");
    requireSetNode(fieldsV1, "fieldsV1");
    return new FieldSet((ObjectNode) fieldsV1.deepCopy());
  }

  /**
   * A set read from a {@code fieldsV1} value's JSON bytes (what a cache keeps of a {@code managedFields} entry).
   *
   * @throws ApplyException when it is not JSON, or not a JSON object of objects
   */
  public static FieldSet parse(byte[] fieldsV1) {
    JsonNode tree;
    try {
      tree = MAPPER.readTree(fieldsV1);
    } catch (JacksonException e) {
      throw new ApplyException("a field set is not JSON: " + e.getOriginalMessage(), e);
    }
    requireSetNode(tree, "fieldsV1");
    return new FieldSet((ObjectNode) tree);
  }

  /** The set that owns nothing. */
  public static FieldSet empty() {
    return new FieldSet(NODES.objectNode());
  }

  private static void requireSetNode(JsonNode node, String where) {
    String wrong = firstNotAnObject(node);
    if (wrong != null) {
      throw new ApplyException("a field set's " + where + wrong + " is not an object");
    }
  }

  /** The path below {@code node} of the first node that is not an object ({@code ""} for itself), or null. */
  private static @Nullable String firstNotAnObject(JsonNode node) {
    if (!node.isObject()) {
      return "";
    }
    for (Map.Entry<String, JsonNode> child : node.properties()) {
      String wrong = firstNotAnObject(child.getValue());
      if (wrong != null) {
        return "/" + child.getKey() + wrong;
      }
    }
    return null;
  }

  /** Whether it owns no field. */
  public boolean isEmpty() {
    return tree.isEmpty();
  }

  /** The set as a {@code fieldsV1} value (a copy). */
  public ObjectNode toJson() {
    return tree.deepCopy();
  }

  /** The tree itself, for readers in this package that never change it. */
  ObjectNode tree() {
    return tree;
  }

  /** Every path either set owns. */
  public FieldSet union(FieldSet other) {
    ObjectNode merged = tree.deepCopy();
    mergeInto(merged, other.tree);
    return new FieldSet(merged);
  }

  private static void mergeInto(ObjectNode target, ObjectNode source) {
    for (Map.Entry<String, JsonNode> child : source.properties()) {
      JsonNode existing = target.get(child.getKey());
      if (existing == null) {
        target.set(child.getKey(), child.getValue().deepCopy());
      } else {
        boolean wasLeaf = existing.isEmpty();
        boolean addsLeaf = child.getValue().isEmpty();
        mergeInto((ObjectNode) existing, (ObjectNode) child.getValue());
        // A leaf owns its node; merged with children it must keep owning it, which "." says.
        if ((wasLeaf || addsLeaf) && !existing.isEmpty()) {
          ((ObjectNode) existing).set(SELF, NODES.objectNode());
        }
      }
    }
  }

  /** The paths of this set that {@code document} holds (its other paths are left out). */
  public FieldSet within(JsonNode document) {
    return new FieldSet(split(tree, document, true));
  }

  /** The paths of this set that {@code document} does not hold. */
  public FieldSet outside(JsonNode document) {
    return new FieldSet(split(tree, document, false));
  }

  private static ObjectNode split(ObjectNode set, JsonNode document, boolean inside) {
    ObjectNode result = NODES.objectNode();
    for (Map.Entry<String, JsonNode> child : set.properties()) {
      String element = child.getKey();
      ObjectNode childSet = (ObjectNode) child.getValue();
      if (element.equals(SELF)) {
        if (inside) {
          result.set(SELF, NODES.objectNode());
        }
        continue;
      }
      JsonNode held = at(document, element);
      if (held == null) {
        if (!inside) {
          result.set(element, childSet.deepCopy());
        }
      } else if (childSet.isEmpty()) {
        if (inside) {
          result.set(element, NODES.objectNode());
        }
      } else {
        ObjectNode part = split(childSet, held, inside);
        if (part.size() == 1 && part.has(SELF)) {
          result.set(element, NODES.objectNode()); // only the node itself: a leaf says the same
        } else if (!part.isEmpty()) {
          result.set(element, part);
        }
      }
    }
    return result;
  }

  /** This set without the path of object fields {@code fieldPath} (and what lies below it). */
  public FieldSet without(List<String> fieldPath) {
    ObjectNode copy = tree.deepCopy();
    removePath(copy, fieldPath, 0);
    return new FieldSet(copy);
  }

  private static void removePath(ObjectNode set, List<String> path, int at) {
    String element = "f:" + path.get(at);
    JsonNode child = set.get(element);
    if (child == null) {
      return;
    }
    if (at == path.size() - 1) {
      set.remove(element);
      return;
    }
    removePath((ObjectNode) child, path, at + 1);
    if (child.isEmpty()) {
      set.remove(element);
    }
  }

  /**
   * The parts of {@code document} at this set's paths: what the manager set, as far as the document shows it. An
   * owned object or list is copied whole; a list of which only some items are owned keeps those items, in the
   * document's order.
   */
  public ObjectNode select(ObjectNode document) {
    return (ObjectNode) select(tree, document);
  }

  private static JsonNode select(ObjectNode set, JsonNode document) {
    if (!hasChildren(set)) {
      return document.deepCopy();
    }
    if (document.isObject()) {
      ObjectNode result = NODES.objectNode();
      for (Map.Entry<String, JsonNode> field : document.properties()) {
        JsonNode childSet = set.get("f:" + field.getKey());
        if (childSet != null) {
          result.set(field.getKey(), select((ObjectNode) childSet, field.getValue()));
        }
      }
      return result;
    }
    if (document.isArray()) {
      ArrayNode result = NODES.arrayNode();
      for (JsonNode item : document) {
        ObjectNode itemSet = itemSet(set, item);
        if (itemSet != null) {
          result.add(select(itemSet, item));
        }
      }
      return result;
    }
    return document.deepCopy();
  }

  /** The set of the list item {@code item} of the list whose set is {@code listSet}, or {@code null}. */
  private static @Nullable ObjectNode itemSet(ObjectNode listSet, JsonNode item) {
    for (Map.Entry<String, JsonNode> element : listSet.properties()) {
      String key = element.getKey();
      if (key.startsWith("k:") && item.isObject() && keyMatches(keyOf(key), item)
          || key.startsWith("v:") && JsonEquality.equal(valueOf(key), item)) {
        return (ObjectNode) element.getValue();
      }
    }
    return null;
  }

  /** Whether a set node has children beyond {@code .}: false for a leaf (the node is owned whole). */
  static boolean hasChildren(ObjectNode set) {
    return set.size() > (set.has(SELF) ? 1 : 0);
  }

  /**
   * What {@code document} holds at one path element, or {@code null}: a field, the item of a list with the key's
   * values (every key field present and equal), a set's item, or an index.
   */
  static @Nullable JsonNode at(JsonNode document, String element) {
    if (document == null) {
      return null;
    }
    if (element.startsWith("f:")) {
      JsonNode value = document.isObject() ? document.get(element.substring(2)) : null;
      return value == null || value.isNull() ? null : value;
    }
    if (!document.isArray()) {
      return null;
    }
    if (element.startsWith("k:")) {
      ObjectNode key = keyOf(element);
      for (JsonNode item : document) {
        if (item.isObject() && keyMatches(key, item)) {
          return item;
        }
      }
      return null;
    }
    if (element.startsWith("v:")) {
      JsonNode value = valueOf(element);
      for (JsonNode item : document) {
        if (JsonEquality.equal(value, item)) {
          return item;
        }
      }
      return null;
    }
    if (element.startsWith("i:")) {
      try {
        int index = Integer.parseInt(element.substring(2));
        return index >= 0 && index < document.size() ? document.get(index) : null;
      } catch (NumberFormatException e) {
        return null;
      }
    }
    return null;
  }

  /**
   * Whether list item {@code item} has the key {@code key}: every key field it has is equal, and it has one at
   * least. A key field the item leaves out matches: a configuration leaves out key fields the server defaults (a
   * container port's {@code protocol}), which the recorded key holds.
   */
  static boolean keyMatches(ObjectNode key, JsonNode item) {
    boolean any = false;
    for (Map.Entry<String, JsonNode> field : key.properties()) {
      JsonNode value = item.get(field.getKey());
      if (value == null || value.isNull()) {
        continue;
      }
      if (!JsonEquality.equal(field.getValue(), value)) {
        return false;
      }
      any = true;
    }
    return any;
  }

  /** The key fields of a {@code k:} element. */
  static ObjectNode keyOf(String element) {
    JsonNode key = parse(element);
    if (!key.isObject()) {
      throw new ApplyException("a field set's key element is not an object: " + element);
    }
    return (ObjectNode) key;
  }

  /** The value of a {@code v:} element. */
  static JsonNode valueOf(String element) {
    return parse(element);
  }

  private static JsonNode parse(String element) {
    try {
      return MAPPER.readTree(element.substring(2));
    } catch (JacksonException e) {
      throw new ApplyException("a field set's element is not JSON: " + element, e);
    }
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof FieldSet set && tree.equals(set.tree);
  }

  @Override
  public int hashCode() {
    return tree.hashCode();
  }

  @Override
  public String toString() {
    return tree.toString();
  }
}
