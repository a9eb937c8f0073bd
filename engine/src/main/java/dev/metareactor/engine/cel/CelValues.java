package dev.metareactor.engine.cel;

import com.google.common.primitives.UnsignedLong;
import com.google.protobuf.ByteString;
import dev.cel.common.values.CelByteString;
import dev.cel.common.values.NullValue;
import dev.metareactor.engine.kube.KubeJson;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * JSON to CEL values and back, as a webhook would see the same request and send the same answer: objects are maps
 * with string keys (in the JSON's order), arrays lists, whole numbers {@code int} (beyond 64 bits {@code double}),
 * other numbers {@code double}, and {@code null} CEL's null. Back to JSON, {@code uint} is a number, {@code bytes}
 * a base64 string (as protobuf's JSON writes them); anything else JSON cannot hold (a NaN, a timestamp, a type, an
 * optional) is an error naming where it is.
 */
final class CelValues {

  private static final JsonNodeFactory NODES = KubeJson.nodes();

  private CelValues() {}

  /** The CEL value of a JSON text. */
  static Object read(byte[] json) {
    try (JsonParser parser = KubeJson.mapper().createParser(json)) {
      return read(parser, parser.nextToken());
    }
  }

  private static Object read(JsonParser parser, JsonToken token) {
    switch (token) {
      case START_OBJECT -> {
        Map<String, Object> map = new LinkedHashMap<>();
        for (JsonToken next = parser.nextToken(); next != JsonToken.END_OBJECT; next = parser.nextToken()) {
          String name = parser.currentName();
          map.put(name, read(parser, parser.nextToken()));
        }
        return map;
      }
      case START_ARRAY -> {
        List<Object> list = new ArrayList<>();
        for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
          list.add(read(parser, next));
        }
        return list;
      }
      case VALUE_STRING -> {
        return parser.getString();
      }
      case VALUE_NUMBER_INT -> {
        // Not a conditional expression: its long branch would be widened to double.
        if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
          return parser.getDoubleValue();
        }
        return parser.getLongValue();
      }
      case VALUE_NUMBER_FLOAT -> {
        return parser.getDoubleValue();
      }
      case VALUE_TRUE -> {
        return true;
      }
      case VALUE_FALSE -> {
        return false;
      }
      case VALUE_NULL -> {
        return NullValue.NULL_VALUE;
      }
      default -> throw new IllegalArgumentException("unexpected JSON token " + token);
    }
  }

  /**
   * A CEL value as JSON.
   *
   * @param sortKeys whether object keys are sorted (a canonical form, for hashing) or kept in the map's order
   * @throws CelHookException naming the path of a value JSON cannot hold
   */
  static JsonNode toJson(Object value, boolean sortKeys) {
    try {
      return write(value, sortKeys);
    } catch (Unwritable e) {
      throw new CelHookException(e.subject + at(String.join("", e.path)) + e.problem);
    }
  }

  /**
   * A value JSON cannot hold, thrown from where it is found: each map and list it is in adds its step to the path on
   * the way out, so that the path is only put together when there is one to tell.
   */
  private static final class Unwritable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String subject;
    private final String problem;
    private final transient Deque<String> path = new ArrayDeque<>();

    Unwritable(String subject, String problem) {
      super(null, null, false, false);
      this.subject = subject;
      this.problem = problem;
    }

    Unwritable under(String step) {
      path.addFirst(step);
      return this;
    }
  }

  private static JsonNode write(Object value, boolean sortKeys) {
    // Final classes first: a failing check for an interface (Map, List) scans the class's interfaces.
    if (value instanceof String text) {
      return NODES.stringNode(text);
    }
    if (value instanceof Boolean bool) {
      return NODES.booleanNode(bool);
    }
    if (value instanceof Long number) {
      return NODES.numberNode(number);
    }
    if (value instanceof Double number) {
      if (number.isNaN() || number.isInfinite()) {
        throw new Unwritable("the answer", " is " + number + ", which JSON cannot hold");
      }
      return NODES.numberNode(number);
    }
    if (value instanceof Map<?, ?> map) {
      ObjectNode object = NODES.objectNode();
      Map<?, ?> entries = sortKeys ? sorted(map) : map;
      for (Map.Entry<?, ?> entry : entries.entrySet()) {
        if (!(entry.getKey() instanceof String key)) {
          throw new Unwritable("the answer", " has a key that is not a string: " + entry.getKey());
        }
        try {
          object.set(key, write(entry.getValue(), sortKeys));
        } catch (Unwritable e) {
          throw e.under("." + key);
        }
      }
      return object;
    }
    if (value instanceof List<?> list) {
      ArrayNode array = NODES.arrayNode(list.size());
      // Iterated, not indexed: a list a comprehension built is a chain of lists, where get(i) walks the chain.
      int index = 0;
      for (Object element : list) {
        try {
          array.add(write(element, sortKeys));
        } catch (Unwritable e) {
          throw e.under("[" + index + "]");
        }
        index++;
      }
      return array;
    }
    if (value instanceof UnsignedLong number) {
      return NODES.numberNode(number.bigIntegerValue());
    }
    if (value instanceof NullValue || value instanceof com.google.protobuf.NullValue) {
      return NODES.nullNode();
    }
    if (value instanceof CelByteString bytes) {
      return NODES.stringNode(Base64.getEncoder().encodeToString(bytes.toByteArray()));
    }
    if (value instanceof ByteString bytes) {
      return NODES.stringNode(Base64.getEncoder().encodeToString(bytes.toByteArray()));
    }
    throw new Unwritable("the answer", " is a " + value.getClass().getSimpleName() + ", which JSON cannot hold");
  }

  private static Map<String, Object> sorted(Map<?, ?> map) {
    Map<String, Object> sorted = new TreeMap<>();
    map.forEach((key, item) -> {
      if (!(key instanceof String text)) {
        throw new Unwritable("the value", " has a key that is not a string: " + key);
      }
      sorted.put(text, item);
    });
    return sorted;
  }

  private static String at(String path) {
    return path.isEmpty() ? "" : " at " + path.substring(path.startsWith(".") ? 1 : 0);
  }
}
