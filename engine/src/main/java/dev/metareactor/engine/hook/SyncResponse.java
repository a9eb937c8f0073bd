package dev.metareactor.engine.hook;

import dev.metareactor.engine.api.HookSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A sync or finalize hook's answer: {@code status}, {@code children} (or {@code attachments} for a
 * DecoratorController, {@code outputs} for a MapController), {@code resyncAfterSeconds}, {@code finalized} and
 * {@code events} (a Metareactor extension: Events to record on the object, {@link HookEvent}), checked field by field.
 *
 * @param status the parent's new status, or {@code null} when the hook returned none
 * @param children the desired children, each a JSON object with {@code apiVersion}, {@code kind} and
 *     {@code metadata.name}
 * @param childrenGiven whether the answer had its children field as a list, empty or not; {@code false} when the
 *     field was absent or {@code null}, which Metacontroller reads as an empty list (so {@code children} is empty
 *     then too), but which may as well be a hook that forgot it
 * @param resyncAfter when to sync the parent again regardless of events, never sooner than
 *     {@link #MIN_RESYNC_AFTER}, or {@code null}
 * @param finalized whether the parent's finalize work is done
 * @param events the Events to record on the object
 */
public record SyncResponse(@Nullable ObjectNode status, List<ObjectNode> children, boolean childrenGiven,
    @Nullable Duration resyncAfter, boolean finalized, List<HookEvent> events) {

  /**
   * The shortest {@code resyncAfterSeconds} followed; a shorter positive one is raised to it, so that a hook answering
   * {@code 0.001} syncs a parent at most ten times a second instead of a thousand. Metacontroller has no floor; its
   * own tests ask for {@code 0.1} and expect the sync within a second, which this keeps.
   */
  public static final Duration MIN_RESYNC_AFTER = Duration.ofMillis(100);

  private static final Logger LOG = LoggerFactory.getLogger(SyncResponse.class);

  public SyncResponse {
    children = List.copyOf(children);
    events = List.copyOf(events);
  }

  /** An answer that gave its children field (a list, possibly empty). */
  public SyncResponse(@Nullable ObjectNode status, List<ObjectNode> children, @Nullable Duration resyncAfter,
      boolean finalized, List<HookEvent> events) {
    this(status, children, true, resyncAfter, finalized, events);
  }

  /** How unknown response fields are treated ({@code responseUnMarshallMode}). */
  public enum UnknownFields {
    /** Logged and ignored (the default for v1 hooks). */
    LOOSE,
    /** Rejected (the default for v2 hooks). */
    STRICT;

    /** A hook's mode: its webhook's {@code responseUnMarshallMode}, else strict for v2 and loose for v1. */
    public static UnknownFields of(HookSpec hook) {
      String mode = hook.webhook().path("responseUnMarshallMode").asString("");
      if (mode.equals("strict")) {
        return STRICT;
      }
      if (mode.equals("loose")) {
        return LOOSE;
      }
      return hook.version() == HookSpec.HookVersion.V2 ? STRICT : LOOSE;
    }
  }

  /**
   * Parses a response body.
   *
   * @param body the parsed JSON
   * @param childrenField {@code children}, {@code attachments} or {@code outputs}
   * @param unknownFields what to do with fields this engine does not know
   * @param onUnknownField told about each unknown field in loose mode (for a log line)
   * @throws HookResponseException naming the field that is wrong
   */
  public static SyncResponse parse(JsonNode body, String childrenField, UnknownFields unknownFields,
      Consumer<String> onUnknownField) {
    return parse(body, childrenField, Set.of(), unknownFields, onUnknownField);
  }

  /**
   * Parses a response body that may also carry fields a kind of controller reads itself (a DecoratorController's
   * {@code labels} and {@code annotations}); those are neither parsed nor treated as unknown here.
   */
  public static SyncResponse parse(JsonNode body, String childrenField, Set<String> otherFields,
      UnknownFields unknownFields, Consumer<String> onUnknownField) {
    Objects.requireNonNull(body, "body");
    if (!body.isObject()) {
      throw new HookResponseException("response must be a JSON object, got " + body.getNodeType());
    }
    Set<String> known = new HashSet<>(otherFields);
    known.addAll(Set.of("status", childrenField, "resyncAfterSeconds", "finalized", "events"));
    for (Map.Entry<String, JsonNode> field : body.properties()) {
      if (!known.contains(field.getKey())) {
        if (unknownFields == UnknownFields.STRICT) {
          throw new HookResponseException("strict validation failed: unknown field \"" + field.getKey() + "\"");
        }
        onUnknownField.accept(field.getKey());
      }
    }

    JsonNode statusNode = body.get("status");
    ObjectNode status = null;
    if (statusNode != null && !statusNode.isNull()) {
      if (!statusNode.isObject()) {
        throw new HookResponseException("status must be an object, got " + statusNode.getNodeType());
      }
      status = (ObjectNode) statusNode;
    }

    List<ObjectNode> children = new ArrayList<>();
    JsonNode list = body.get(childrenField);
    boolean childrenGiven = list != null && !list.isNull();
    if (childrenGiven) {
      if (!list.isArray()) {
        throw new HookResponseException(childrenField + " must be a list, got " + list.getNodeType());
      }
      for (int i = 0; i < list.size(); i++) {
        children.add(checkChild(list.get(i), childrenField + "[" + i + "]"));
      }
    }

    Duration resyncAfter = resyncAfter(body.get("resyncAfterSeconds"));

    JsonNode finalizedNode = body.get("finalized");
    boolean finalized = false;
    if (finalizedNode != null && !finalizedNode.isNull()) {
      if (!finalizedNode.isBoolean()) {
        throw new HookResponseException("finalized must be true or false, got " + finalizedNode.getNodeType());
      }
      finalized = finalizedNode.booleanValue();
    }
    return new SyncResponse(status, children, childrenGiven, resyncAfter, finalized,
        HookEvent.parse(body.get("events")));
  }

  /** {@code resyncAfterSeconds}: {@code null} when absent, zero or negative; raised to {@link #MIN_RESYNC_AFTER}. */
  private static @Nullable Duration resyncAfter(@Nullable JsonNode resync) {
    if (resync == null || resync.isNull()) {
      return null;
    }
    if (!resync.isNumber()) {
      throw new HookResponseException("resyncAfterSeconds must be a number, got " + resync.getNodeType());
    }
    double seconds = resync.doubleValue();
    if (!(seconds > 0)) {
      return null;
    }
    Duration asked = Duration.ofNanos((long) Math.min(seconds * 1e9, Long.MAX_VALUE));
    if (asked.compareTo(MIN_RESYNC_AFTER) < 0) {
      LOG.debug("resyncAfterSeconds {} is below the floor of {} s: raised to it", resync,
          MIN_RESYNC_AFTER.toMillis() / 1000.0);
      return MIN_RESYNC_AFTER;
    }
    return asked;
  }

  private static ObjectNode checkChild(@Nullable JsonNode child, String field) {
    if (child == null || !child.isObject()) {
      throw new HookResponseException(field + " must be an object, got "
          + (child == null ? "nothing" : child.getNodeType()));
    }
    requireText(child.get("apiVersion"), field + ".apiVersion");
    requireText(child.get("kind"), field + ".kind");
    JsonNode metadata = child.get("metadata");
    if (metadata == null || !metadata.isObject()) {
      throw new HookResponseException(field + ".metadata must be an object");
    }
    requireText(metadata.get("name"), field + ".metadata.name");
    JsonNode namespace = metadata.get("namespace");
    if (namespace != null && !namespace.isNull() && !namespace.isString()) {
      throw new HookResponseException(field + ".metadata.namespace must be a string");
    }
    JsonNode labels = metadata.get("labels");
    if (labels != null && !labels.isNull()) {
      if (!labels.isObject()) {
        throw new HookResponseException(field + ".metadata.labels must be an object of strings");
      }
      for (Map.Entry<String, JsonNode> label : labels.properties()) {
        if (!label.getValue().isString()) {
          throw new HookResponseException(field + ".metadata.labels." + label.getKey() + " must be a string");
        }
      }
    }
    return (ObjectNode) child;
  }

  private static void requireText(@Nullable JsonNode node, String field) {
    if (node == null || !node.isString() || node.stringValue().isEmpty()) {
      throw new HookResponseException(field + " is required and must be a non-empty string");
    }
  }
}
