package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.controller.ChildOrder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The hook of the composite ITs, one handler for sync and finalize (told apart by {@code finalizing}):
 *
 * <ul>
 *   <li>sync: one ConfigMap {@code <parent>-<name>} per entry of the parent's {@code spec.names} (in each
 *       namespace of {@code spec.namespaces} when given, else the parent's), with {@code data.value} =
 *       {@code spec.value} and the labels in {@code spec.labels}; status
 *       {@code {children: <desired>, observed: <children it was shown>}}; {@code deleteParent: true} when the
 *       parent's {@code spec.expired} is true;</li>
 *   <li>finalize: ordered teardown — it keeps all observed ConfigMaps but the last by name, and answers
 *       {@code finalized: true} once it is shown none;</li>
 *   <li>it counts calls per parent, remembers the last request, every child name it was ever shown, and the
 *       children it was shown in each finalize call; it fails (HTTP 500) while {@link #failing} is set.</li>
 * </ul>
 */
final class ConfigMapHook implements Function<JsonNode, JsonNode> {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
  final Map<String, JsonNode> lastRequest = new ConcurrentHashMap<>();
  final Map<String, Set<String>> seen = new ConcurrentHashMap<>();
  final Map<String, List<List<String>>> finalizeCalls = new ConcurrentHashMap<>();
  volatile boolean failing;
  /** Answered as {@code resyncAfterSeconds} when set. */
  volatile Double resyncAfterSeconds;

  @Override
  public JsonNode apply(JsonNode request) {
    JsonNode parent = request.path("parent");
    String name = parent.path("metadata").path("name").asString();
    calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
    lastRequest.put(name, request);
    JsonNode observed = request.path("children").path("ConfigMap.v1");
    List<String> observedNames = observed.properties().stream()
        .map(child -> child.getValue().path("metadata").path("name").asString()).sorted().toList();
    seen.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).addAll(observedNames);
    if (failing) {
      throw new IllegalStateException("hook is down");
    }
    ObjectNode response = NODES.objectNode();
    ArrayNode children = response.putArray("children");
    if (request.path("finalizing").booleanValue()) {
      finalizeCalls.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>()).add(observedNames);
      for (String keep : observedNames.subList(0, Math.max(0, observedNames.size() - 1))) {
        addChild(children, keep, parent);
      }
      response.put("finalized", observedNames.isEmpty());
    } else {
      JsonNode namespaces = parent.path("spec").path("namespaces");
      for (JsonNode suffix : parent.path("spec").path("names")) {
        if (namespaces.isArray()) {
          for (JsonNode namespace : namespaces) {
            addChild(children, name + "-" + suffix.asString(), parent).put("namespace", namespace.asString());
          }
        } else {
          addChild(children, name + "-" + suffix.asString(), parent);
        }
      }
    }
    response.putObject("status")
        .put("children", children.size())
        .put("observed", observed.size());
    if (resyncAfterSeconds != null) {
      response.put("resyncAfterSeconds", resyncAfterSeconds);
    }
    if (parent.path("spec").path("expired").asBoolean(false)) {
      response.put("deleteParent", true);
    }
    return response;
  }

  /** Adds a desired ConfigMap and returns its metadata. */
  private static ObjectNode addChild(ArrayNode children, String childName, JsonNode parent) {
    ObjectNode child = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
    ObjectNode metadata = child.putObject("metadata").put("name", childName);
    JsonNode labels = parent.path("spec").path("labels");
    if (labels.isObject()) {
      metadata.set("labels", labels.deepCopy());
    }
    JsonNode order = parent.path("spec").path("orders").path(childName);
    if (order.isString()) {
      metadata.putObject("annotations").put(ChildOrder.ANNOTATION, order.asString());
    }
    child.putObject("data").put("value", parent.path("spec").path("value").asString());
    return metadata;
  }

  int calls(String parent) {
    AtomicInteger count = calls.get(parent);
    return count == null ? 0 : count.get();
  }

  Map<String, Integer> snapshot(List<String> parents) {
    Map<String, Integer> snapshot = new HashMap<>();
    parents.forEach(parent -> snapshot.put(parent, calls(parent)));
    return snapshot;
  }
}
