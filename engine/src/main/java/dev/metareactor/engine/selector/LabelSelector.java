package dev.metareactor.engine.selector;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * A Kubernetes label selector: every requirement must hold. Built from the API form ({@code matchLabels} +
 * {@code matchExpressions}, as in {@code spec.selector}) or from the string form kubectl and
 * {@code --target-label-selector} use ({@code app=web,tier!=db,env in (prod,staging),!legacy}).
 *
 * <p>An empty selector matches everything; whether "empty" is acceptable is the caller's decision
 * (CompositeController rejects an empty {@code spec.selector}, as Metacontroller does).
 */
public record LabelSelector(List<Requirement> requirements) {

  private static final LabelSelector EVERYTHING = new LabelSelector(List.of());

  public LabelSelector {
    requirements = List.copyOf(requirements);
  }

  /** The selector that matches every object. */
  public static LabelSelector everything() {
    return EVERYTHING;
  }

  public boolean isEmpty() {
    return requirements.isEmpty();
  }

  public boolean matches(@Nullable Map<String, String> labels) {
    Map<String, String> present = labels == null ? Map.of() : labels;
    for (Requirement requirement : requirements) {
      if (!requirement.matches(present)) {
        return false;
      }
    }
    return true;
  }

  /** Both selectors at once. */
  public LabelSelector and(LabelSelector other) {
    List<Requirement> all = new ArrayList<>(requirements);
    all.addAll(other.requirements);
    return new LabelSelector(all);
  }

  /**
   * The labels an object must carry with exactly these values ({@code key=value} and single-value {@code In}
   * terms): what an index of parents by label can look up.
   */
  public Map<String, String> requiredLabels() {
    return requirements.stream()
        .filter(r -> r.requiredValue() != null)
        .collect(Collectors.toUnmodifiableMap(Requirement::key, Requirement::requiredValue, (a, b) -> a));
  }

  /**
   * Parses the API form: {@code {"matchLabels": {...}, "matchExpressions": [{"key", "operator", "values"}]}}.
   * A missing or null node is the empty selector.
   *
   * @throws IllegalArgumentException naming the offending field
   */
  public static LabelSelector fromApi(@Nullable JsonNode selector) {
    if (selector == null || selector.isNull() || selector.isMissingNode()) {
      return EVERYTHING;
    }
    if (!selector.isObject()) {
      throw new IllegalArgumentException("label selector must be an object");
    }
    List<Requirement> requirements = new ArrayList<>();
    JsonNode matchLabels = selector.get("matchLabels");
    if (matchLabels != null && !matchLabels.isNull()) {
      if (!matchLabels.isObject()) {
        throw new IllegalArgumentException("matchLabels must be an object of strings");
      }
      for (Map.Entry<String, JsonNode> label : matchLabels.properties()) {
        if (!label.getValue().isString()) {
          throw new IllegalArgumentException("matchLabels." + label.getKey() + " must be a string");
        }
        requirements.add(Requirement.in(label.getKey(), label.getValue().stringValue()));
      }
    }
    JsonNode expressions = selector.get("matchExpressions");
    if (expressions != null && !expressions.isNull()) {
      if (!expressions.isArray()) {
        throw new IllegalArgumentException("matchExpressions must be a list");
      }
      for (JsonNode expression : expressions) {
        JsonNode key = expression.get("key");
        JsonNode operator = expression.get("operator");
        if (key == null || !key.isString() || operator == null || !operator.isString()) {
          throw new IllegalArgumentException("matchExpressions entries need a string key and operator");
        }
        Set<String> values = new LinkedHashSet<>();
        JsonNode list = expression.get("values");
        if (list != null && !list.isNull()) {
          if (!list.isArray()) {
            throw new IllegalArgumentException("matchExpressions[" + key.stringValue() + "].values must be a list");
          }
          for (JsonNode value : list) {
            values.add(value.asString());
          }
        }
        requirements.add(new Requirement(key.stringValue(), Requirement.Operator.fromApi(operator.stringValue()),
            values));
      }
    }
    return new LabelSelector(requirements);
  }

  /**
   * Parses the string form: comma-separated terms {@code k=v}, {@code k==v}, {@code k!=v},
   * {@code k in (a,b)}, {@code k notin (a,b)}, {@code k} and {@code !k}. Blank text is the empty selector.
   *
   * @throws IllegalArgumentException naming the term that does not parse
   */
  public static LabelSelector parse(String text) {
    Objects.requireNonNull(text, "text");
    List<Requirement> requirements = new ArrayList<>();
    for (String term : splitTerms(text)) {
      requirements.add(parseTerm(term.strip(), text));
    }
    return new LabelSelector(requirements);
  }

  /** Splits at commas outside parentheses. */
  private static List<String> splitTerms(String text) {
    List<String> terms = new ArrayList<>();
    if (text.isBlank()) {
      return terms;
    }
    int depth = 0;
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '(') {
        depth++;
      } else if (c == ')') {
        depth--;
      } else if (c == ',' && depth == 0) {
        terms.add(text.substring(start, i));
        start = i + 1;
      }
    }
    terms.add(text.substring(start));
    return terms;
  }

  private static Requirement parseTerm(String term, String whole) {
    if (term.isEmpty()) {
      throw new IllegalArgumentException("empty term in label selector '" + whole + "'");
    }
    if (term.startsWith("!")) {
      return Requirement.doesNotExist(key(term.substring(1), whole));
    }
    int notEquals = term.indexOf("!=");
    if (notEquals > 0) {
      return Requirement.notIn(key(term.substring(0, notEquals), whole), value(term.substring(notEquals + 2), whole));
    }
    int equals = term.indexOf('=');
    if (equals > 0) {
      String rest = term.substring(equals + 1);
      String value = rest.startsWith("=") ? rest.substring(1) : rest;
      return Requirement.in(key(term.substring(0, equals), whole), value(value, whole));
    }
    String[] words = term.split("\\s+", 2);
    if (words.length == 2) {
      String operatorAndValues = words[1].strip();
      if (operatorAndValues.startsWith("in") || operatorAndValues.startsWith("notin")) {
        boolean notIn = operatorAndValues.startsWith("notin");
        String set = operatorAndValues.substring(notIn ? 5 : 2).strip();
        if (!set.startsWith("(") || !set.endsWith(")")) {
          throw new IllegalArgumentException("expected (values) in label selector term '" + term + "'");
        }
        Set<String> values = new LinkedHashSet<>();
        for (String v : set.substring(1, set.length() - 1).split(",")) {
          values.add(value(v, whole));
        }
        return new Requirement(key(words[0], whole), notIn ? Requirement.Operator.NOT_IN : Requirement.Operator.IN,
            values);
      }
      throw new IllegalArgumentException("unknown operator in label selector term '" + term + "'");
    }
    return Requirement.exists(key(term, whole));
  }

  private static String key(String key, String whole) {
    String k = key.strip();
    if (k.isEmpty()
        || !k.matches("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9](/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")) {
      throw new IllegalArgumentException("invalid label key '" + k + "' in label selector '" + whole + "'");
    }
    return k;
  }

  private static String value(String value, String whole) {
    String v = value.strip();
    if (!v.isEmpty() && !v.matches("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")) {
      throw new IllegalArgumentException("invalid label value '" + v + "' in label selector '" + whole + "'");
    }
    return v;
  }

  /** The string form, with terms in a stable order. */
  @Override
  public String toString() {
    return requirements.stream().map(r -> switch (r.operator()) {
      case IN -> r.values().size() == 1 ? r.key() + "=" + r.requiredValue()
          : r.key() + " in (" + String.join(",", r.sortedValues()) + ")";
      case NOT_IN -> r.values().size() == 1 ? r.key() + "!=" + r.values().iterator().next()
          : r.key() + " notin (" + String.join(",", r.sortedValues()) + ")";
      case EXISTS -> r.key();
      case DOES_NOT_EXIST -> "!" + r.key();
    }).collect(Collectors.joining(","));
  }
}
