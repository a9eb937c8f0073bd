package dev.metareactor.engine.cel;

import dev.cel.common.values.NullValue;
import dev.cel.runtime.CelVariableResolver;
import dev.metareactor.engine.kube.KubeJson;
import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.RandomAccess;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.SerializableString;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.POJONode;
import tools.jackson.databind.util.RawValue;

/**
 * One evaluation's variables: the hook request's fields, read from the request's tree where the expression reads
 * them, instead of the whole request written out as JSON and read back (which cost more than the expression did).
 *
 * <p>An object is a read-only map over its {@link ObjectNode} (keys in the JSON's order) and an array a read-only
 * list over its {@link ArrayNode}; a member becomes a CEL value when it is read, so what the expression never reads
 * costs nothing. An object the request embeds as its JSON bytes (the observed objects, as the engine caches them) is
 * read into CEL values ({@link CelValues#read}) the first time the expression reads it, once per evaluation. Every
 * value is the one {@link CelValues#read} makes of the same JSON: an expression sees what it saw when the request
 * was written out and read back.
 *
 * <p>Not thread-safe: one evaluation, on one thread, reads it.
 */
final class CelRequest implements CelVariableResolver {

  private static final Set<String> FIELDS = Set.copyOf(CelHookProgram.VARIABLES);

  private final ObjectNode request;
  /** The embedded JSON read so far, by its node. */
  private @Nullable Map<JsonNode, Object> embedded;

  /** @throws IllegalArgumentException when {@code request} is not an object */
  CelRequest(JsonNode request) {
    if (!(request instanceof ObjectNode object)) {
      throw new IllegalArgumentException("a hook request is a JSON object, not " + request.getNodeType());
    }
    this.request = object;
  }

  /**
   * {@link CelHookProgram#REQUEST} is the whole request, each of {@link CelHookProgram#VARIABLES} the request's field
   * of that name ({@code null} when it has none).
   */
  @Override
  public Optional<Object> find(String name) {
    if (name.equals(CelHookProgram.REQUEST)) {
      return Optional.of(new ObjectView(request, this));
    }
    if (!FIELDS.contains(name)) {
      return Optional.empty();
    }
    JsonNode field = request.get(name);
    return Optional.of(field == null ? NullValue.NULL_VALUE : value(field));
  }

  /** {@code node} as a CEL value. */
  private Object value(JsonNode node) {
    return switch (node.getNodeType()) {
      case OBJECT -> new ObjectView((ObjectNode) node, this);
      case ARRAY -> new ArrayView((ArrayNode) node, this);
      case STRING -> node.stringValue();
      case BOOLEAN -> node.booleanValue();
      case NULL -> NullValue.NULL_VALUE;
      case NUMBER -> number(node);
      case POJO -> embedded(node);
      default -> CelValues.read(KubeJson.bytes(node));
    };
  }

  /**
   * A number as its JSON text would be read: whole numbers of 64 bits as {@code int}, finite doubles as they are.
   * Anything else is rare enough to be written out and read back (a float or a big decimal is written as its text,
   * which may read as a whole number; NaN and the infinities as strings).
   */
  private static Object number(JsonNode node) {
    switch (node.numberType()) {
      case INT, LONG -> {
        return node.longValue();
      }
      case BIG_INTEGER -> {
        if (node.canConvertToLong()) {
          return node.longValue();
        }
      }
      case DOUBLE -> {
        double value = node.doubleValue();
        if (Double.isFinite(value)) {
          return value;
        }
      }
      default -> {
        // written out and read back, below
      }
    }
    return CelValues.read(KubeJson.bytes(node));
  }

  private Object embedded(JsonNode node) {
    Map<JsonNode, Object> read = embedded;
    if (read == null) {
      read = new IdentityHashMap<>();
      embedded = read;
    }
    Object value = read.get(node);
    if (value == null) {
      value = CelValues.read(bytes(node));
      read.put(node, value);
    }
    return value;
  }

  /** The JSON of an embedded value: the bytes it holds when it holds them, else it written out. */
  private static byte[] bytes(JsonNode node) {
    if (node instanceof POJONode pojo && pojo.getPojo() instanceof RawValue raw) {
      if (raw.rawValue() instanceof SerializableString json) {
        return json.asUnquotedUTF8();
      }
      if (raw.rawValue() instanceof String json) {
        return json.getBytes(StandardCharsets.UTF_8);
      }
    }
    return KubeJson.bytes(node);
  }

  /** A JSON object as a CEL map. */
  private static final class ObjectView extends AbstractMap<String, Object> {
    private final ObjectNode node;
    private final CelRequest request;

    ObjectView(ObjectNode node, CelRequest request) {
      this.node = node;
      this.request = request;
    }

    @Override
    public int size() {
      return node.size();
    }

    @Override
    public boolean containsKey(@Nullable Object key) {
      return key instanceof String name && node.get(name) != null;
    }

    @Override
    public @Nullable Object get(@Nullable Object key) {
      JsonNode member = key instanceof String name ? node.get(name) : null;
      return member == null ? null : request.value(member);
    }

    /** The names alone: a comprehension over a map reads its keys, and needs none of the values read. */
    @Override
    public Set<String> keySet() {
      return new AbstractSet<>() {
        @Override
        public int size() {
          return node.size();
        }

        @Override
        public boolean contains(@Nullable Object key) {
          return containsKey(key);
        }

        @Override
        public Iterator<String> iterator() {
          return Collections.unmodifiableCollection(node.propertyNames()).iterator();
        }
      };
    }

    @Override
    public Set<Map.Entry<String, Object>> entrySet() {
      return new AbstractSet<>() {
        @Override
        public int size() {
          return node.size();
        }

        @Override
        public Iterator<Map.Entry<String, Object>> iterator() {
          Iterator<Map.Entry<String, JsonNode>> members = node.properties().iterator();
          return new Iterator<>() {
            @Override
            public boolean hasNext() {
              return members.hasNext();
            }

            @Override
            public Map.Entry<String, Object> next() {
              Map.Entry<String, JsonNode> member = members.next();
              return new AbstractMap.SimpleImmutableEntry<>(member.getKey(), request.value(member.getValue()));
            }
          };
        }
      };
    }
  }

  /** A JSON array as a CEL list. */
  private static final class ArrayView extends AbstractList<Object> implements RandomAccess {
    private final ArrayNode node;
    private final CelRequest request;

    ArrayView(ArrayNode node, CelRequest request) {
      this.node = node;
      this.request = request;
    }

    @Override
    public int size() {
      return node.size();
    }

    @Override
    public Object get(int index) {
      JsonNode element = node.get(index);
      if (element == null) {
        throw new IndexOutOfBoundsException("index " + index + " of " + node.size());
      }
      return request.value(element);
    }
  }
}
