package dev.metareactor.apply;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Kubernetes server-side apply from the engine's side: the configuration a child is applied with, and whether
 * applying it would change anything, decided without a request.
 *
 * <p>The API server merges an apply configuration with a schema the engine does not have, so the engine cannot
 * compute the result. It can tell when there is nothing to do, from what the server recorded: the
 * {@link FieldSet} of the engine's field manager in the live object's {@code managedFields}. Applying the same
 * configuration again changes nothing exactly when
 * <ol>
 *   <li>every field the configuration sets is owned by the manager already (else the apply would take it over),
 *       and</li>
 *   <li>holds the configured value in the live object (else the apply would write it back: someone changed a field
 *       the manager owns — drift — whether or not that moved {@code metadata.generation}), and</li>
 *   <li>every field the manager owns is still in the configuration (else the apply would remove it).</li>
 * </ol>
 * The set says how to compare lists: by item key ({@code k:} elements, whose key fields the configuration may leave
 * to the server's defaults), as sets ({@code v:}), or whole (a leaf: an atomic list or map).
 *
 * <p>The answer errs one way only: "changed" for a configuration the server would store differently than written
 * (a quantity {@code 1000m} stored as {@code 1}, an empty map dropped). The caller finds out by applying once and
 * remembering it (the engine's appliers do); an unchanged verdict is always right.
 *
 * <p>Inputs are never mutated. Stateless and thread-safe.
 */
public final class ServerSideApply {

  private ServerSideApply() {}

  /**
   * The apply configuration for {@code desired}: a copy without the {@linkplain DynamicApply#SYSTEM_METADATA_FIELDS
   * system metadata fields}, {@code status} (a controller never writes its children's status) and the
   * {@linkplain LastAppliedConfiguration last-applied annotation} (server-side apply needs none).
   */
  public static ObjectNode configuration(ObjectNode desired) {
    ObjectNode configuration = desired.deepCopy();
    configuration.remove("status");
    if (configuration.get("metadata") instanceof ObjectNode metadata) {
      DynamicApply.SYSTEM_METADATA_FIELDS.forEach(metadata::remove);
      if (metadata.get("annotations") instanceof ObjectNode annotations) {
        annotations.remove(LastAppliedConfiguration.ANNOTATION);
        if (annotations.isEmpty()) {
          metadata.remove("annotations");
        }
      }
    }
    return configuration;
  }

  /**
   * Whether applying {@code configuration} as the manager that owns {@code owned} in {@code live} would change
   * nothing.
   *
   * @param live the object as the API server has it
   * @param configuration what the manager applies ({@link #configuration})
   * @param owned the manager's field set in {@code live}, or {@code null} when it owns nothing there
   */
  public static boolean unchanged(JsonNode live, ObjectNode configuration, @Nullable FieldSet owned) {
    Objects.requireNonNull(live, "live");
    Objects.requireNonNull(configuration, "configuration");
    if (owned == null) {
      return false;
    }
    ObjectNode set = owned.tree();
    for (Map.Entry<String, JsonNode> field : configuration.properties()) {
      String name = field.getKey();
      if (name.equals("apiVersion") || name.equals("kind")) {
        continue; // the object's type, never a managed field
      }
      JsonNode value = field.getValue();
      JsonNode fieldSet = set.get("f:" + name);
      if (name.equals("metadata") && value.isObject()) {
        if (!metadataUnchanged((ObjectNode) value, fieldSet, live.get("metadata"))) {
          return false;
        }
      } else if (!fieldUnchanged(value, fieldSet, live.get(name))) {
        return false;
      }
    }
    return ownsNothingElse(set, configuration);
  }

  /** The metadata: name and namespace say which object it is, never a managed field. */
  private static boolean metadataUnchanged(ObjectNode metadata, JsonNode set, JsonNode live) {
    ObjectNode rest = metadata.deepCopy();
    rest.remove("name");
    rest.remove("namespace");
    rest.remove("generateName");
    if (rest.isEmpty()) {
      return set == null || !FieldSet.hasChildren((ObjectNode) set);
    }
    return fieldUnchanged(rest, set, live);
  }

  /**
   * One configured value against the live one.
   *
   * @param set the manager's set for this field, {@code null} when it owns none of it
   * @param live the live value, {@code null} when absent
   */
  private static boolean fieldUnchanged(JsonNode value, @Nullable JsonNode set, @Nullable JsonNode live) {
    if (isEmpty(value) && (set == null || !FieldSet.hasChildren((ObjectNode) set))) {
      // Nothing configured here (null, {} or []): the server keeps an empty value or drops it.
      return live == null || live.isNull() || JsonEquality.equal(value, live) || isEmpty(value) && isEmpty(live);
    }
    if (set == null || live == null || live.isNull()) {
      return false;
    }
    ObjectNode fieldSet = (ObjectNode) set;
    if (!FieldSet.hasChildren(fieldSet)) {
      return JsonEquality.equal(value, live); // a scalar, or an atomic map or list, owned whole
    }
    if (value.isObject()) {
      return live.isObject() && objectUnchanged((ObjectNode) value, fieldSet, live);
    }
    if (value.isArray()) {
      return live.isArray() && listUnchanged(value, fieldSet, live);
    }
    return false; // a scalar configured where the manager owns an object's or a list's parts
  }

  private static boolean objectUnchanged(ObjectNode value, ObjectNode set, JsonNode live) {
    for (Map.Entry<String, JsonNode> field : value.properties()) {
      if (!fieldUnchanged(field.getValue(), set.get("f:" + field.getKey()), live.get(field.getKey()))) {
        return false;
      }
    }
    return ownsNothingElse(set, value);
  }

  /** Every element of the set (but {@code .}) is a field of {@code value}. */
  private static boolean ownsNothingElse(ObjectNode set, ObjectNode value) {
    for (String element : set.propertyNames()) {
      if (element.equals(".")) {
        continue;
      }
      if (!element.startsWith("f:")) {
        return false;
      }
      JsonNode configured = value.get(element.substring(2));
      if (configured == null || configured.isNull()) {
        return false;
      }
    }
    return true;
  }

  /** A list whose items the set names: by key ({@code k:}) or by value ({@code v:}). */
  private static boolean listUnchanged(JsonNode items, ObjectNode set, JsonNode live) {
    ListElements elements = ListElements.of(set);
    if (elements == null || elements.size() != items.size()) {
      return false; // an item added, one the manager owns dropped, or elements this cannot read
    }
    Set<String> matched = new HashSet<>();
    Map<String, List<JsonNode>> liveItems = elements.index(live);
    for (JsonNode item : items) {
      ListElements.Element element = elements.naming(item);
      if (element == null || !matched.add(element.name())) {
        return false;
      }
      JsonNode liveItem = elements.in(liveItems, live, element);
      if (liveItem == null) {
        return false;
      }
      if (element.key() == null) {
        continue; // a set's item: the value is the element itself, and the live list holds it
      }
      ObjectNode itemSet = (ObjectNode) set.get(element.name());
      if (!item.isObject() || !liveItem.isObject()) {
        return false;
      }
      if (FieldSet.hasChildren(itemSet) ? !objectUnchanged((ObjectNode) item, itemSet, liveItem)
          : !JsonEquality.equal(item, liveItem)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The {@code k:} or {@code v:} elements of one list's set, read once, with an index by the first key field's
   * value, so that matching a list's items costs a lookup each, not a scan of every element (a custom resource's
   * list of a thousand items).
   */
  private static final class ListElements {

    /** One element: its name in the set, and its key fields ({@code k:}) or {@code null} and its value ({@code v:}). */
    record Element(String name, @Nullable ObjectNode key, @Nullable JsonNode value) {}

    private final List<Element> all;
    private final @Nullable String indexField;
    private final Map<String, List<Element>> index = new HashMap<>();

    private ListElements(List<Element> all, @Nullable String indexField) {
      this.all = all;
      this.indexField = indexField;
      for (Element element : all) {
        index.computeIfAbsent(indexValue(element), v -> new ArrayList<>(1)).add(element);
      }
    }

    /** The elements of {@code set}, or {@code null} when it names items otherwise (by index, or both ways). */
    static @Nullable ListElements of(ObjectNode set) {
      List<Element> elements = new ArrayList<>(set.size());
      String indexField = null;
      boolean keys = false;
      boolean values = false;
      for (String name : set.propertyNames()) {
        if (name.equals(".")) {
          continue;
        }
        if (name.startsWith("k:")) {
          ObjectNode key = FieldSet.keyOf(name);
          if (indexField == null && !key.isEmpty()) {
            indexField = key.propertyNames().iterator().next();
          }
          elements.add(new Element(name, key, null));
          keys = true;
        } else if (name.startsWith("v:")) {
          elements.add(new Element(name, null, FieldSet.valueOf(name)));
          values = true;
        } else {
          return null;
        }
      }
      return keys && values ? null : new ListElements(elements, keys ? indexField : null);
    }

    int size() {
      return all.size();
    }

    /** The one element that names {@code item}, or {@code null} when none or several do. */
    @Nullable Element naming(JsonNode item) {
      Element found = null;
      for (Element element : candidates(item)) {
        if (element.key() != null ? item.isObject() && FieldSet.keyMatches(element.key(), item)
            : JsonEquality.equal(element.value(), item)) {
          if (found != null) {
            return null;
          }
          found = element;
        }
      }
      return found;
    }

    /** The items of a live list by the value of the index field (or, for a set, by themselves). */
    Map<String, List<JsonNode>> index(JsonNode live) {
      Map<String, List<JsonNode>> items = new HashMap<>();
      for (JsonNode item : live) {
        String value = indexValue(item);
        if (value != null) {
          items.computeIfAbsent(value, v -> new ArrayList<>(1)).add(item);
        }
      }
      return items;
    }

    /** The item of the live list that {@code element} names, or {@code null}. */
    @Nullable JsonNode in(Map<String, List<JsonNode>> index, JsonNode live, Element element) {
      String value = indexValue(element);
      List<JsonNode> hit = value == null ? null : index.get(value);
      for (JsonNode item : hit != null ? hit : live) {
        if (element.key() != null ? item.isObject() && FieldSet.keyMatches(element.key(), item)
            : JsonEquality.equal(element.value(), item)) {
          return item;
        }
      }
      return null;
    }

    private List<Element> candidates(JsonNode item) {
      String value = indexValue(item);
      if (value == null) {
        return all;
      }
      List<Element> hit = index.get(value);
      // A value written otherwise than the recorded key (3.0 for 3) is found by the scan.
      return hit != null ? hit : all;
    }

    private @Nullable String indexValue(Element element) {
      return element.key() == null ? text(element.value())
          : indexField == null ? null : text(element.key().get(indexField));
    }

    private @Nullable String indexValue(JsonNode item) {
      if (indexField == null) {
        return all.isEmpty() || all.get(0).key() != null ? null : text(item);
      }
      return text(item.get(indexField));
    }

    /**
     * A value as the index files it: a scalar's text (a string and a number of the same text share a bucket; the
     * match is checked), {@code null} for anything else, which is then found by a scan.
     */
    private static @Nullable String text(@Nullable JsonNode value) {
      return value != null && value.isValueNode() && !value.isNull() ? value.asString() : null;
    }
  }

  private static boolean isEmpty(@Nullable JsonNode value) {
    return value == null || value.isNull() || (value.isObject() || value.isArray()) && value.isEmpty();
  }
}
