package dev.metareactor.apply;

import java.math.BigDecimal;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Deep equality of JSON values as the apply engine needs it to decide "changed": the same as Metacontroller's
 * {@code reflect.DeepEqual} over decoded JSON, except where that comparison reports a change the API server
 * would undo, which would make the engine write the same object on every sync (a hot update loop):
 * <ul>
 *   <li>numbers compare by the value Go decodes them to ({@code int64} when integral and in range, else
 *       {@code float64}), and an {@code int64} equals a {@code float64} of the same value: {@code 1}, {@code 1.0} and
 *       {@code 1e0} are equal (Go compares the {@code int64} and {@code float64} they decode to as different);</li>
 *   <li>an object member whose value is {@code null} equals an absent member (typed resources drop nulls, so a
 *       desired {@code "field": null} would otherwise never match what the server returns).</li>
 * </ul>
 * Everything else is strict: strings by content, arrays by order and length, booleans, and the type of each
 * value ({@code "1"} is not {@code 1}).
 */
public final class JsonEquality {

  private JsonEquality() {}

  /** Whether {@code a} and {@code b} are semantically the same JSON value; {@code null} means absent. */
  public static boolean equal(@Nullable JsonNode a, @Nullable JsonNode b) {
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

  private static boolean isAbsent(@Nullable JsonNode node) {
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

  /**
   * Compares the values Go decodes the two numbers to: an {@code int64} for an integral literal that fits, else a
   * {@code float64}. So {@code 123456789012345678901234} equals {@code 1.2345678901234569e+23}, the value a server
   * stores for it (it is beyond int64), while an int64 and a float64 compare exactly: {@code 9007199254740993}
   * is not {@code 9007199254740992.0}.
   */
  static boolean numbersEqual(JsonNode a, JsonNode b) {
    boolean aLong = isInt64(a);
    boolean bLong = isInt64(b);
    if (aLong && bLong) {
      return a.longValue() == b.longValue();
    }
    if (!aLong && !bLong) {
      return a.doubleValue() == b.doubleValue();
    }
    long integer = aLong ? a.longValue() : b.longValue();
    double floating = aLong ? b.doubleValue() : a.doubleValue();
    return new BigDecimal(integer).compareTo(new BigDecimal(floating)) == 0;
  }

  private static boolean isInt64(JsonNode number) {
    return number.isIntegralNumber() && number.canConvertToLong();
  }
}
