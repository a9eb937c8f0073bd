package dev.metareactor.engine.controller.related;

import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * One entry of a customize hook's {@code relatedResources}: a resource and which of its objects the parent's
 * sync and finalize hooks are shown under {@code related}.
 *
 * @param apiVersion the resource's apiVersion
 * @param resource its plural name
 * @param selection how objects are selected, decided from which fields are set (as upstream)
 * @param labels {@code labelSelector}; everything when absent
 * @param namespaces {@code namespaceSelector}, for {@link Selection#NAMESPACE_SELECTOR} only
 * @param namespace {@code namespace}, or {@code null}; {@link #ANY_NAMESPACE} means every namespace
 * @param names {@code names}; empty means every name
 */
public record RelatedRule(String apiVersion, String resource, Selection selection, LabelSelector labels,
    @Nullable LabelSelector namespaces, @Nullable String namespace, List<String> names) {

  /** A {@code namespace} that stands for every namespace. */
  public static final String ANY_NAMESPACE = "*";

  /** Upstream's selection types. */
  public enum Selection {
    /** {@code labelSelector} (or nothing): objects whose labels match, in the parent's namespace or anywhere. */
    LABELS,
    /** {@code labelSelector} and {@code namespace}: objects whose labels match, in that namespace. */
    NAMESPACE_AND_LABELS,
    /** {@code namespace} and/or {@code names}: those objects (all of the namespace when no names are given). */
    NAMESPACES_AND_NAMES,
    /** {@code namespaceSelector} (and optionally {@code labelSelector}): objects in the namespaces it selects. */
    NAMESPACE_SELECTOR
  }

  public RelatedRule {
    Objects.requireNonNull(apiVersion, "apiVersion");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(selection, "selection");
    Objects.requireNonNull(labels, "labels");
    names = List.copyOf(names);
  }

  /**
   * Parses {@code relatedResources[index]}.
   *
   * @throws HookResponseException naming the field when it is malformed or combines fields upstream rejects
   */
  public static RelatedRule parse(JsonNode node, int index) {
    String field = "relatedResources[" + index + "]";
    if (node == null || !node.isObject()) {
      throw new HookResponseException(field + " must be an object");
    }
    String apiVersion = requiredText(node, "apiVersion", field);
    String resource = requiredText(node, "resource", field);
    JsonNode labelNode = present(node.get("labelSelector"));
    JsonNode namespaceSelectorNode = present(node.get("namespaceSelector"));
    String namespace = optionalText(node, "namespace", field);
    List<String> names = names(present(node.get("names")), field);
    if (!names.isEmpty() && (labelNode != null || namespaceSelectorNode != null)) {
      throw new HookResponseException(field + ": names cannot be combined with labelSelector or namespaceSelector");
    }
    if (namespace != null && namespaceSelectorNode != null) {
      throw new HookResponseException(field + ": namespace cannot be combined with namespaceSelector");
    }
    LabelSelector labels = selector(labelNode, field + ".labelSelector");
    Selection selection;
    if (namespaceSelectorNode != null) {
      selection = Selection.NAMESPACE_SELECTOR;
    } else if (labelNode != null && namespace != null) {
      selection = Selection.NAMESPACE_AND_LABELS;
    } else if (namespace != null || !names.isEmpty()) {
      selection = Selection.NAMESPACES_AND_NAMES;
    } else {
      selection = Selection.LABELS;
    }
    return new RelatedRule(apiVersion, resource, selection, labels,
        namespaceSelectorNode == null ? null : selector(namespaceSelectorNode, field + ".namespaceSelector"),
        namespace, names);
  }

  private static @Nullable JsonNode present(@Nullable JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode() ? null : node;
  }

  private static String requiredText(JsonNode node, String name, String field) {
    JsonNode value = node.get(name);
    if (value == null || !value.isString() || value.stringValue().isEmpty()) {
      throw new HookResponseException(field + "." + name + " is required and must be a non-empty string");
    }
    return value.stringValue();
  }

  private static @Nullable String optionalText(JsonNode node, String name, String field) {
    JsonNode value = present(node.get(name));
    if (value == null) {
      return null;
    }
    if (!value.isString()) {
      throw new HookResponseException(field + "." + name + " must be a string");
    }
    return value.stringValue().isEmpty() ? null : value.stringValue();
  }

  private static List<String> names(@Nullable JsonNode node, String field) {
    if (node == null) {
      return List.of();
    }
    if (!node.isArray()) {
      throw new HookResponseException(field + ".names must be a list of strings");
    }
    List<String> names = new ArrayList<>();
    for (JsonNode name : node) {
      if (!name.isString()) {
        throw new HookResponseException(field + ".names must be a list of strings");
      }
      names.add(name.stringValue());
    }
    return names;
  }

  private static LabelSelector selector(@Nullable JsonNode node, String field) {
    if (node == null) {
      return LabelSelector.everything();
    }
    try {
      return LabelSelector.fromApi(node);
    } catch (IllegalArgumentException e) {
      throw new HookResponseException(field + ": " + e.getMessage());
    }
  }
}
