package dev.metareactor.engine.hook;

import dev.metareactor.engine.hook.SyncResponse.UnknownFields;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import tools.jackson.databind.JsonNode;

/**
 * The fields of a hook's answer that one reader declares ({@link AnswerField}): the fields every sync answer has
 * ({@link SyncResponse}), a kind's own (a DecoratorController's {@code labels} and {@code annotations}), a customize
 * answer's. The one list is what the strict check accepts and what the values are read from; a value is read only
 * through the list it is declared in ({@link Values#get}), so a field cannot be read without being accepted, nor
 * accepted without being read.
 */
public final class AnswerFields {

  private final Map<String, AnswerField<?>> fields;
  /** What the whole-answer checks' messages start with: {@code ""}, or the hook's name and a colon. */
  private final String prefix;

  private AnswerFields(Map<String, AnswerField<?>> fields, String prefix) {
    this.fields = Collections.unmodifiableMap(fields);
    this.prefix = prefix;
  }

  /**
   * The fields given, in that order.
   *
   * @throws IllegalArgumentException when two have the same name
   */
  public static AnswerFields of(AnswerField<?>... fields) {
    Map<String, AnswerField<?>> byName = new LinkedHashMap<>();
    for (AnswerField<?> field : fields) {
      if (byName.put(field.name(), field) != null) {
        throw new IllegalArgumentException("answer field " + field.name() + " declared twice");
      }
    }
    return new AnswerFields(byName, "");
  }

  /** These fields and {@code field}. */
  public AnswerFields with(AnswerField<?> field) {
    Map<String, AnswerField<?>> more = new LinkedHashMap<>(fields);
    if (more.put(field.name(), field) != null) {
      throw new IllegalArgumentException("answer field " + field.name() + " declared twice");
    }
    return new AnswerFields(more, prefix);
  }

  /** These fields, the whole-answer checks naming {@code hook} ({@code customize hook}) in their messages. */
  public AnswerFields about(String hook) {
    return new AnswerFields(fields, hook + ": ");
  }

  /** The fields' names: what a parser that leaves these fields to their reader accepts. */
  public Set<String> names() {
    return fields.keySet();
  }

  /**
   * Checks the answer whole and reads these fields: it must be a JSON object, and a field that is neither one of
   * these nor one of {@code readElsewhere} is refused when {@code unknownFields} is strict, else told to
   * {@code onUnknown} and ignored.
   *
   * @param readElsewhere the names of fields a later reader reads from the same answer (a kind's own)
   * @throws HookResponseException naming what is wrong
   */
  public Values read(JsonNode answer, Set<String> readElsewhere, UnknownFields unknownFields,
      Consumer<String> onUnknown) {
    if (!answer.isObject()) {
      throw new HookResponseException(prefix + "response must be a JSON object, got " + answer.getNodeType());
    }
    for (String field : answer.propertyNames()) {
      if (!fields.containsKey(field) && !readElsewhere.contains(field)) {
        if (unknownFields == UnknownFields.STRICT) {
          throw new HookResponseException(prefix + "strict validation failed: unknown field \"" + field + "\"");
        }
        onUnknown.accept(field);
      }
    }
    return read(answer);
  }

  /**
   * Reads these fields from an answer already checked whole.
   *
   * @throws HookResponseException naming the field that is wrong
   */
  public Values read(JsonNode answer) {
    Map<AnswerField<?>, Object> values = new HashMap<>();
    fields.values().forEach(field -> values.put(field, field.reader().read(answer.get(field.name()))));
    return new Values(values);
  }

  /** The values read from one answer. */
  public static final class Values {

    private final Map<AnswerField<?>, Object> values;

    private Values(Map<AnswerField<?>, Object> values) {
      this.values = values;
    }

    /**
     * The value of {@code field}.
     *
     * @throws IllegalStateException when {@code field} is not one of the fields read: declare it in the list
     */
    @SuppressWarnings("unchecked") // put by read() as the value of this very field's reader
    public <T> T get(AnswerField<T> field) {
      if (!values.containsKey(field)) {
        throw new IllegalStateException("answer field " + field.name() + " is not declared where it is read");
      }
      return (T) values.get(field);
    }
  }
}
