package dev.metareactor.engine.api;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * One of a rolling child rule's {@code updateStrategy.statusChecks.conditions}: the child must have a
 * {@code status.conditions} entry of {@code type}, and when given, that {@code status} and {@code reason}. A rollout
 * moves the next child only while every child already on the latest revision passes its checks.
 *
 * @param type the condition type, required
 * @param status the condition status it must have ({@code "True"}, say), or {@code null} for any
 * @param reason the reason it must have, or {@code null} for any
 */
public record StatusCheck(String type, @Nullable String status, @Nullable String reason) {

  public StatusCheck {
    Objects.requireNonNull(type, "type");
  }

  /**
   * Why {@code child} fails this check, in Metacontroller's words (they end up in the parent's {@code Updated}
   * condition), or empty when it passes. A condition's member that is not a string reads as empty.
   */
  public Optional<String> failureOn(JsonNode child) {
    JsonNode condition = conditionOf(child);
    if (condition == null) {
      return Optional.of("required condition type missing: " + quote(type));
    }
    String actualStatus = text(condition, "status");
    if (status != null && !status.equals(actualStatus)) {
      return Optional.of(quote(type) + " condition status is " + quote(actualStatus) + " (want " + quote(status)
          + ")");
    }
    String actualReason = text(condition, "reason");
    if (reason != null && !reason.equals(actualReason)) {
      return Optional.of(quote(type) + " condition reason is " + quote(actualReason) + " (want " + quote(reason)
          + ")");
    }
    return Optional.empty();
  }

  private @Nullable JsonNode conditionOf(JsonNode child) {
    JsonNode conditions = child.path("status").path("conditions");
    if (!conditions.isArray()) {
      return null;
    }
    for (JsonNode condition : conditions) {
      if (condition.isObject() && type.equals(text(condition, "type"))) {
        return condition;
      }
    }
    return null;
  }

  private static String text(JsonNode condition, String member) {
    JsonNode value = condition.get(member);
    return value != null && value.isString() ? value.stringValue() : "";
  }

  /** Go's {@code %q} for the plain strings conditions hold. */
  private static String quote(String text) {
    StringBuilder quoted = new StringBuilder(text.length() + 2).append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\t' -> quoted.append("\\t");
        default -> quoted.append(c);
      }
    }
    return quoted.append('"').toString();
  }
}
