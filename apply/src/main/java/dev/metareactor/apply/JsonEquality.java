package dev.metareactor.apply;

import java.math.BigDecimal;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Deep equality of JSON values as the apply engine needs it to decide "changed": the same as Metacontroller's
 * {@code reflect.DeepEqual} over decoded JSON, except where that comparison reports a change the API server
 * would undo, which would make the engine write the same object on every sync (a hot update loop):
 * <ul>
 *   <li>numbers compare by value: {@code 1}, {@code 1.0} and {@code 1e0} are equal (Go compares the
 *       {@code int64} and {@code float64} they decode to as different);</li>
 *   <li>an object member whose value is {@code null} equals an absent member (typed resources drop nulls, so a
 *       desired {@code "field": null} would otherwise never match what the server returns).</li>
 * </ul>
 * Everything else is strict: strings by content, arrays by order and length, booleans, and the type of each
 * value ({@code "1"} is not {@code 1}).
 */
public final class JsonEquality {

  private JsonEquality() {}

  /** Whether {@code a} and {@code b} are semantically the same JSON value; {@code null} means absent. */
  public static boolean equal(JsonNode a, JsonNode b) {
    if (a == b) {
      return true;
    }
    if (a == null || b == null) {
      return isAbsent(a) && isAbsent(b);
    }
    switch (a.getNodeType()) {
      case OBJECT:
        return b.isObject() && objectsEqual(a, b);
      case ARRAY:
        return b.isArray() && arraysEqual(a, b);
      case STRING:
        return b.isString() && a.stringValue().equals(b.stringValue());
      case NUMBER:
        return b.isNumber() && numbersEqual(a, b);
      case BOOLEAN:
        return b.isBoolean() && a.booleanValue() == b.booleanValue();
      case NULL:
      case MISSING:
        return isAbsent(b);
      default:
        return a.equals(b);
    }
  }

  private static boolean isAbsent(JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode();
  }

  private static boolean objectsEqual(JsonNode a, JsonNode b) {
    int nonNullInA = 0;
    for (Map.Entry<String, JsonNode> entry : a.properties()) {
      JsonNode value = entry.getValue();
      if (value.isNull()) {
        if (!isAbsent(b.get(entry.getKey()))) {
          return false;
        }
        continue;
      }
      nonNullInA++;
      if (!equal(value, b.get(entry.getKey()))) {
        return false;
      }
    }
    if (nonNullInA == b.size()) {
      return true;
    }
    // b has more members than a's non-null ones: equal only if every extra member of b is null.
    int nonNullInB = 0;
    for (JsonNode value : b.values()) {
      if (!value.isNull()) {
        nonNullInB++;
      }
    }
    return nonNullInA == nonNullInB;
  }

  private static boolean arraysEqual(JsonNode a, JsonNode b) {
    int size = a.size();
    if (size != b.size()) {
      return false;
    }
    for (int i = 0; i < size; i++) {
      if (!equal(a.get(i), b.get(i))) {
        return false;
      }
    }
    return true;
  }

  static boolean numbersEqual(JsonNode a, JsonNode b) {
    boolean aLong = a.isIntegralNumber() && a.canConvertToLong();
    boolean bLong = b.isIntegralNumber() && b.canConvertToLong();
    if (aLong && bLong) {
      return a.longValue() == b.longValue();
    }
    if (a.isFloatingPointNumber() && b.isFloatingPointNumber() && !a.isBigDecimal() && !b.isBigDecimal()) {
      return a.doubleValue() == b.doubleValue();
    }
    return exact(a).compareTo(exact(b)) == 0;
  }

  private static BigDecimal exact(JsonNode number) {
    if (number.isIntegralNumber()) {
      return new BigDecimal(number.bigIntegerValue());
    }
    if (number.isBigDecimal()) {
      return number.decimalValue();
    }
    return new BigDecimal(number.doubleValue());
  }
}
