package dev.metareactor.engine.kube;

import tools.jackson.core.JsonParser;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * The one JSON mapper the engine reads and writes Kubernetes objects with (Jackson 3 trees; numbers as Jackson reads
 * them: int, long, big integer, double — what the apply engine expects).
 *
 * <p>Objects as the API server sends them (watch events, lists, the answers to writes) are read by parsers of their
 * own ({@link #objectParser}). Most of their names recur from object to object, and Jackson keeps the names it has
 * seen in a table shared by the parsers of one factory, so that each is decoded once; but a parser that meets a name
 * the table lacks first copies the whole table (hundreds of kilobytes once it has grown to Jackson's limit of 6,000
 * names). The API server's objects carry such names: {@code managedFields} names each owner reference by its owner's
 * UID ({@code k:{"uid":"..."}}), so every child of another parent added one. In a converge of 5,000 parents that
 * copying was half of all the engine allocated (1.7 of 3.4 GB). The object parsers' factory is therefore replaced by
 * a fresh one once its table holds {@link #MAX_OBJECT_NAMES} names: a name new to the table costs a copy of at most
 * that many, and the mapper's table, for hook answers and the trees of kept objects (which have no
 * {@code managedFields}), never sees such names. Not without the table at all: Jackson then reads characters, not
 * bytes, and the engine splices objects by their bytes' offsets.
 */
public final class KubeJson {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();
  /** Reads one value out of a larger document: what follows it is the caller's to read. */
  private static final ObjectReader VALUE_READER =
      MAPPER.readerFor(JsonNode.class).without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** Where {@link #objectParser} takes its parsers from; replaced when its table is full. */
  private static volatile ObjectParsers objectParsers = new ObjectParsers();

  /**
   * The most names an object parsers' table holds before the next parser gets a fresh one: room for the names of
   * several kinds of objects (a Pod has about 150), while a copy of the table stays under a hundred kilobytes
   * (KubeObjectBenchmark, {@code owners=distinct}: 74 KB per event read with a new owner).
   */
  static final int MAX_OBJECT_NAMES = 1_000;

  /** A JSON factory that tells how many names its parsers' shared table holds. */
  private static final class ObjectParsers extends JsonFactory {
    private static final long serialVersionUID = 1L;

    int names() {
      return _byteSymbolCanonicalizer.size();
    }
  }

  private KubeJson() {}

  public static JsonMapper mapper() {
    return MAPPER;
  }

  /**
   * A parser of an object, a list or a watch event as the API server sends it, which may carry
   * {@code managedFields}: see the class comment for why not {@code mapper().createParser}.
   */
  public static JsonParser objectParser(byte[] json) {
    return objectParser(json, 0, json.length);
  }

  /** {@link #objectParser(byte[])} of {@code length} bytes of {@code json} from {@code offset}. */
  public static JsonParser objectParser(byte[] json, int offset, int length) {
    ObjectParsers parsers = objectParsers;
    if (parsers.names() > MAX_OBJECT_NAMES) {
      // Racing threads may each make one; the factories they drop hold nothing else.
      parsers = new ObjectParsers();
      objectParsers = parsers;
    }
    return parsers.createParser(ObjectReadContext.empty(), json, offset, length);
  }

  /** How many names the object parsers' current table holds. */
  static int objectNames() {
    return objectParsers.names();
  }

  /** The tree of an object as the API server sends it (see {@link #objectParser(byte[])}). */
  public static JsonNode readObjectTree(byte[] json) {
    try (JsonParser parser = objectParser(json)) {
      return MAPPER.readTree(parser);
    }
  }

  public static JsonNodeFactory nodes() {
    return JsonNodeFactory.instance;
  }

  /** The value at the parser's current token, as a tree; the parser is left on its last token. */
  public static JsonNode readValue(JsonParser parser) {
    return VALUE_READER.readValue(parser);
  }

  /** A string as a JSON string literal. */
  public static String quote(String text) {
    return MAPPER.writeValueAsString(text);
  }

  /** Compact UTF-8 JSON of a tree, for a request body. */
  public static byte[] bytes(JsonNode node) {
    return MAPPER.writeValueAsBytes(node);
  }

  /** Compact JSON text of a tree. */
  public static String text(JsonNode node) {
    return MAPPER.writeValueAsString(node);
  }
}
