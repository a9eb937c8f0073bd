package dev.metareactor.engine.hook;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * One Event a hook asks the engine to record on the object it synced (Metacontroller issue #249): an answer's
 * {@code events: [{type: Normal|Warning, reason, message}]}. Recorded like the engine's own Events (rate limited per
 * object, aggregated); the message is cut to {@value #MAX_MESSAGE} characters.
 *
 * @param warning whether its type is {@code Warning} (else {@code Normal})
 * @param reason a short UpperCamelCase word, as Kubernetes reasons are ({@code BackupTaken})
 * @param message what happened, for people
 */
public record HookEvent(boolean warning, String reason, String message) {

  /** The longest message recorded; a longer one is cut, ending in {@code ...}. */
  public static final int MAX_MESSAGE = 1024;
  /** The most Events one answer may carry. */
  public static final int MAX_EVENTS = 20;
  private static final Pattern REASON = Pattern.compile("[A-Za-z][A-Za-z0-9]{0,127}");
  private static final Set<String> FIELDS = Set.of("type", "reason", "message");

  public HookEvent {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(message, "message");
  }

  /**
   * The answer's {@code events}; none when the field is absent or null.
   *
   * @throws HookResponseException naming the field that is wrong
   */
  static List<HookEvent> parse(@Nullable JsonNode events) {
    if (events == null || events.isNull()) {
      return List.of();
    }
    if (!events.isArray()) {
      throw new HookResponseException("events must be a list, got " + events.getNodeType());
    }
    if (events.size() > MAX_EVENTS) {
      throw new HookResponseException("events: at most " + MAX_EVENTS + " per answer, got " + events.size());
    }
    List<HookEvent> parsed = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      parsed.add(parseOne(events.get(i), "events[" + i + "]"));
    }
    return List.copyOf(parsed);
  }

  private static HookEvent parseOne(JsonNode event, String field) {
    if (!event.isObject()) {
      throw new HookResponseException(field + " must be an object, got " + event.getNodeType());
    }
    for (Map.Entry<String, JsonNode> property : event.properties()) {
      if (!FIELDS.contains(property.getKey())) {
        throw new HookResponseException(field + ": unknown field \"" + property.getKey() + "\"");
      }
    }
    String type = event.path("type").asString("");
    if (!type.equals("Normal") && !type.equals("Warning")) {
      throw new HookResponseException(field + ".type must be Normal or Warning, got " + event.path("type"));
    }
    JsonNode reason = event.get("reason");
    if (reason == null || !reason.isString() || !REASON.matcher(reason.stringValue()).matches()) {
      throw new HookResponseException(field + ".reason must be a word of letters and digits (at most 128), got "
          + (reason == null ? "nothing" : reason.toString()));
    }
    JsonNode message = event.get("message");
    if (message == null || !message.isString() || message.stringValue().isBlank()) {
      throw new HookResponseException(field + ".message is required and must be a non-empty string");
    }
    String text = message.stringValue();
    if (text.length() > MAX_MESSAGE) {
      text = text.substring(0, MAX_MESSAGE - 3) + "...";
    }
    return new HookEvent(type.equals("Warning"), reason.stringValue(), text);
  }
}
