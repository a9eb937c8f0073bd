package dev.metareactor.engine.hook;

import dev.metareactor.engine.api.HookSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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

  /** {@code status}: the object's new status, empty when the hook returned none. */
  public static final AnswerField<Optional<ObjectNode>> STATUS = new AnswerField<>("status", status -> {
    if (status == null || status.isNull()) {
      return Optional.empty();
    }
    if (!status.isObject()) {
      throw new HookResponseException("status must be an object, got " + status.getNodeType());
    }
    return Optional.of((ObjectNode) status);
  });

  /** {@code resyncAfterSeconds}: when to sync again regardless of events, empty for never ({@link #resyncAfter}). */
  public static final AnswerField<Optional<Duration>> RESYNC_AFTER =
      new AnswerField<>("resyncAfterSeconds", resync -> Optional.ofNullable(resyncAfter(resync)));

  /** {@code finalized}: whether the object's finalize work is done. */
  public static final AnswerField<Boolean> FINALIZED = AnswerField.flag("finalized");

  /** {@code events}: the Events to record on the object ({@link HookEvent}). */
  public static final AnswerField<List<HookEvent>> EVENTS = new AnswerField<>("events", HookEvent::parse);

  /**
   * The fields every sync and finalize answer has, beyond the owned objects' (whose name is the kind's): a field
   * shared by every kind is declared above, listed here and read into a component of this record, all in this file.
   */
  public static final AnswerFields SHARED = AnswerFields.of(STATUS, RESYNC_AFTER, FINALIZED, EVENTS);

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
   * Parses a response body that may also carry fields a kind of controller reads itself: the names of its
   * {@link AnswerFields} (a DecoratorController's {@code labels} and {@code annotations}), accepted here and read by
   * the kind from the same body.
   */
  public static SyncResponse parse(JsonNode body, String childrenField, Set<String> otherFields,
      UnknownFields unknownFields, Consumer<String> onUnknownField) {
    Objects.requireNonNull(body, "body");
    AnswerField<Optional<List<ObjectNode>>> owned = owned(childrenField);
    AnswerFields.Values answer = SHARED.with(owned).read(body, otherFields, unknownFields, onUnknownField);
    Optional<List<ObjectNode>> children = answer.get(owned);
    return new SyncResponse(answer.get(STATUS).orElse(null), children.orElse(List.of()), children.isPresent(),
        answer.get(RESYNC_AFTER).orElse(null), answer.get(FINALIZED), answer.get(EVENTS));
  }

  /**
   * The owned objects' field: each checked ({@code apiVersion}, {@code kind}, {@code metadata.name}...); empty when
   * the field is absent or {@code null}, which Metacontroller reads as an empty list ({@link #childrenGiven}).
   */
  private static AnswerField<Optional<List<ObjectNode>>> owned(String field) {
    return new AnswerField<>(field, list -> {
      if (list == null || list.isNull()) {
        return Optional.empty();
      }
      if (!list.isArray()) {
        throw new HookResponseException(field + " must be a list, got " + list.getNodeType());
      }
      List<ObjectNode> children = new ArrayList<>(list.size());
      for (int i = 0; i < list.size(); i++) {
        children.add(checkChild(list.get(i), field + "[" + i + "]"));
      }
      return Optional.of(children);
    });
  }

  /** {@code resyncAfterSeconds}: {@code null} when absent, zero or negative; raised to {@link #MIN_RESYNC_AFTER}. */
  private static @Nullable Duration resyncAfter(@Nullable JsonNode resync) {
    if (resync == null || resync.isNull()) {
      return null;
    }
    if (!resync.isNumber()) {
      throw new HookResponseException("resyncAfterSeconds must be a number, got " + resync.getNodeType());
    }
    double seconds = seconds(resync);
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

  /**
   * A number of seconds as a double; one too large for a double is infinite, of its sign. A parsed integer of 310 to
   * 400 digits (the parse limit) is a big integer node, whose {@code doubleValue()} throws rather than overflow.
   */
  private static double seconds(JsonNode number) {
    return number.isBigInteger() || number.isBigDecimal() ? number.decimalValue().doubleValue()
        : number.doubleValue();
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
