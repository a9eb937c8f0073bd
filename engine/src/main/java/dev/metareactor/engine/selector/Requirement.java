package dev.metareactor.engine.selector;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One term of a label selector: {@code key} compared to {@code values} by {@code operator}.
 *
 * @param key the label key
 * @param operator how to compare
 * @param values the values for {@code In}/{@code NotIn}/{@code Equals}/{@code NotEquals} (one value for the
 *     latter two), empty for {@code Exists}/{@code DoesNotExist}
 */
public record Requirement(String key, Operator operator, Set<String> values) {

  /** Selector operators, as Kubernetes defines them. */
  public enum Operator {
    IN,
    NOT_IN,
    EXISTS,
    DOES_NOT_EXIST;

    /** Parses a {@code matchExpressions} operator ({@code In}, {@code NotIn}, {@code Exists}, {@code DoesNotExist}). */
    public static Operator fromApi(String value) {
      return switch (value) {
        case "In" -> IN;
        case "NotIn" -> NOT_IN;
        case "Exists" -> EXISTS;
        case "DoesNotExist" -> DOES_NOT_EXIST;
        default -> throw new IllegalArgumentException("\"" + value + "\" is not a valid label selector operator");
      };
    }
  }

  public Requirement {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(operator, "operator");
    values = Set.copyOf(values);
    if (key.isEmpty()) {
      throw new IllegalArgumentException("label selector key must not be empty");
    }
    switch (operator) {
      case IN, NOT_IN -> {
        if (values.isEmpty()) {
          throw new IllegalArgumentException("values must be non-empty for operator " + operator + " on key " + key);
        }
      }
      default -> {
        if (!values.isEmpty()) {
          throw new IllegalArgumentException("values must be empty for operator " + operator + " on key " + key);
        }
      }
    }
  }

  public static Requirement in(String key, String... values) {
    return new Requirement(key, Operator.IN, Set.of(values));
  }

  public static Requirement notIn(String key, String... values) {
    return new Requirement(key, Operator.NOT_IN, Set.of(values));
  }

  public static Requirement exists(String key) {
    return new Requirement(key, Operator.EXISTS, Set.of());
  }

  public static Requirement doesNotExist(String key) {
    return new Requirement(key, Operator.DOES_NOT_EXIST, Set.of());
  }

  /** Whether {@code labels} satisfy this term. */
  public boolean matches(Map<String, String> labels) {
    String value = labels.get(key);
    return switch (operator) {
      case IN -> value != null && values.contains(value);
      case NOT_IN -> value == null || !values.contains(value);
      case EXISTS -> value != null;
      case DOES_NOT_EXIST -> value == null;
    };
  }

  /** The single value this term pins the key to, if it is an equality ({@code In} with one value). */
  public @Nullable String requiredValue() {
    return operator == Operator.IN && values.size() == 1 ? values.iterator().next() : null;
  }

  List<String> sortedValues() {
    return values.stream().sorted().toList();
  }
}
