package dev.metareactor.engine.hook;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * One field of a hook's answer, declared once as a constant: its name and how its value is read. It is accepted by
 * the strict check and read only through the {@link AnswerFields} it is listed in, so a field is accepted exactly when
 * something reads it.
 *
 * @param name the field's name in the answer
 * @param reader reads its value, checking it
 * @param <T> its value as read; {@code Optional} when the field may be absent without a default
 */
public record AnswerField<T>(String name, Reader<T> reader) {

  public AnswerField {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reader, "reader");
  }

  /** A {@code true}/{@code false} field: {@code false} when absent or {@code null}. */
  public static AnswerField<Boolean> flag(String name) {
    return new AnswerField<>(name, value -> {
      if (value == null || value.isNull()) {
        return false;
      }
      if (!value.isBoolean()) {
        throw new HookResponseException(name + " must be true or false, got " + value.getNodeType());
      }
      return value.booleanValue();
    });
  }

  /** How a field's value is read. */
  @FunctionalInterface
  public interface Reader<T> {

    /**
     * The field's value.
     *
     * @param value the field in the answer; {@code null} when the answer lacks it
     * @throws HookResponseException naming the field when the value is wrong
     */
    T read(@Nullable JsonNode value);
  }
}
