package dev.metareactor.engine.kube;

import tools.jackson.core.JsonParser;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * The one JSON mapper the engine reads and writes Kubernetes objects with (Jackson 3 trees; numbers as Jackson reads
 * them: int, long, big integer, double — what the apply engine expects).
 */
public final class KubeJson {

  private static final JsonMapper MAPPER = JsonMapper.builder().build();
  /** Reads one value out of a larger document: what follows it is the caller's to read. */
  private static final ObjectReader VALUE_READER =
      MAPPER.readerFor(JsonNode.class).without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private KubeJson() {}

  public static JsonMapper mapper() {
    return MAPPER;
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
