package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.StatusCheck;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.KubeObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The order in which a parent's owned objects are written, when the hook asks for one: a desired object annotated
 * {@value #ANNOTATION}{@code : "<integer>"} (0 when absent) is created or updated only once every desired object of a
 * lower order exists, is not being deleted and passes the status checks of its type ({@code
 * updateStrategy.statusChecks} of its child rule, when it has any); objects no longer desired are deleted highest
 * order first, a lower one only once no higher one is left. The hook sees the whole desired set as always; a sync
 * writes what the order lets it, and the events of what it wrote (a child created, its status changing) bring the
 * parent back for the next step. An answer without the annotation is written as it always was, all at once.
 */
public final class ChildOrder {

  /** The annotation a desired object's order is read from. */
  public static final String ANNOTATION = "metareactor.dev/order";

  private ChildOrder() {}

  /**
   * The order of a desired object.
   *
   * @param metadata its {@code metadata}
   * @param description what the object is, for the message
   * @throws HookResponseException naming the object when the annotation is not an integer
   */
  public static int of(JsonNode metadata, String description) {
    JsonNode value = metadata.path("annotations").get(ANNOTATION);
    if (value == null || value.isNull()) {
      return 0;
    }
    Integer order = value.isString() ? parse(value.stringValue()) : null;
    if (order == null) {
      throw new HookResponseException(description + ": metadata.annotations[" + ANNOTATION + "] must be an integer"
          + " in a string, got " + value);
    }
    return order;
  }

  /** The order an observed object was written with; 0 when it has none or one that is not an integer. */
  static int ofObserved(KubeObject object) {
    String value = object.annotations().get(ANNOTATION);
    Integer order = value == null ? null : parse(value);
    return order == null ? 0 : order;
  }

  private static @Nullable Integer parse(String text) {
    try {
      return Integer.valueOf(text.strip());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * The desired objects that may be created or updated now: every one of the lowest order, and those of each next
   * order while every one of the orders below it exists, is not being deleted and passes its type's status checks.
   *
   * @param desired the answer's objects, checked ({@link DesiredObjects})
   * @param observed the parent's owned objects now, by type
   */
  public static List<DesiredChild> writable(List<DesiredChild> desired, Map<ChildType, List<KubeObject>> observed) {
    TreeMap<Integer, List<DesiredChild>> byOrder = new TreeMap<>();
    for (DesiredChild child : desired) {
      byOrder.computeIfAbsent(of(child.object().path("metadata"), child.namespacedName()), o -> new ArrayList<>())
          .add(child);
    }
    if (byOrder.size() <= 1) {
      return desired;
    }
    Map<ChildType, Map<String, KubeObject>> existing = byName(observed);
    List<DesiredChild> writable = new ArrayList<>(desired.size());
    for (List<DesiredChild> step : byOrder.values()) {
      writable.addAll(step);
      for (DesiredChild child : step) {
        KubeObject current = existing.getOrDefault(child.type(), Map.of()).get(child.namespacedName());
        if (current == null || current.deleting() || failedCheck(child.type(), current).isPresent()) {
          return writable;
        }
      }
    }
    return writable;
  }

  /**
   * The objects no longer desired that may be deleted now: those of the highest order among every owned object that
   * is not desired, those being deleted included (they are still there).
   *
   * @param undesired the objects to delete ({@link ChildrenManager#undesired})
   * @param observed the parent's owned objects now, by type
   * @param desired the answer's objects
   */
  public static Map<ChildType, List<KubeObject>> deletable(Map<ChildType, List<KubeObject>> undesired,
      Map<ChildType, List<KubeObject>> observed, List<DesiredChild> desired) {
    Map<ChildType, Map<String, DesiredChild>> wanted = new HashMap<>();
    desired.forEach(child -> wanted.computeIfAbsent(child.type(), t -> new HashMap<>())
        .put(child.namespacedName(), child));
    Integer highest = null;
    boolean ordered = false;
    for (Map.Entry<ChildType, List<KubeObject>> entry : observed.entrySet()) {
      Map<String, DesiredChild> wantedOfType = wanted.getOrDefault(entry.getKey(), Map.of());
      for (KubeObject child : entry.getValue()) {
        if (!wantedOfType.containsKey(child.namespacedName())) {
          int order = ofObserved(child);
          ordered |= highest != null && order != highest;
          highest = highest == null ? order : Math.max(highest, order);
        }
      }
    }
    if (!ordered || highest == null) {
      return undesired;
    }
    int last = highest;
    Map<ChildType, List<KubeObject>> deletable = new LinkedHashMap<>();
    undesired.forEach((type, children) -> {
      List<KubeObject> now = children.stream().filter(child -> ofObserved(child) == last).toList();
      if (!now.isEmpty()) {
        deletable.put(type, now);
      }
    });
    return deletable;
  }

  /** Why {@code object} fails a status check of its type, or empty. */
  private static Optional<String> failedCheck(ChildType type, KubeObject object) {
    if (type.statusChecks().isEmpty()) {
      return Optional.empty();
    }
    JsonNode tree = object.toTree();
    for (StatusCheck check : type.statusChecks()) {
      Optional<String> failure = check.failureOn(tree);
      if (failure.isPresent()) {
        return failure;
      }
    }
    return Optional.empty();
  }

  private static Map<ChildType, Map<String, KubeObject>> byName(Map<ChildType, List<KubeObject>> observed) {
    Map<ChildType, Map<String, KubeObject>> byName = new HashMap<>();
    observed.forEach((type, children) -> {
      Map<String, KubeObject> ofType = new HashMap<>();
      children.forEach(child -> ofType.put(child.namespacedName(), child));
      byName.put(type, ofType);
    });
    return byName;
  }
}
