package dev.metareactor.apply;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@value #ANNOTATION} annotation: the configuration the controller last asked for, kept on the child so
 * the next apply can tell fields the controller dropped (to delete) from fields others set (to keep).
 *
 * <p>The value is the desired object without this annotation, serialized by {@link GoJson} so that it matches
 * what Metacontroller wrote byte for byte.
 */
public final class LastAppliedConfiguration {

  /** The annotation key, shared with Metacontroller. */
  public static final String ANNOTATION = "metacontroller.k8s.io/last-applied-configuration";

  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private LastAppliedConfiguration() {}

  /** The raw annotation value on {@code object}, or {@code null} when absent or empty. */
  public static @Nullable String raw(JsonNode object) {
    JsonNode value = object.path("metadata").path("annotations").get(ANNOTATION);
    if (value == null || !value.isString() || value.stringValue().isEmpty()) {
      return null;
    }
    return value.stringValue();
  }

  /**
   * Parses the annotation on {@code observed}.
   *
   * @return the last-applied object, or {@code null} when the object has no (or an empty) annotation, which
   *     Metacontroller treats as "nothing applied before"
   * @throws ApplyException when the annotation is not valid JSON
   */
  public static @Nullable JsonNode read(JsonNode observed) {
    String raw = raw(observed);
    if (raw == null) {
      return null;
    }
    try {
      return MAPPER.readTree(raw);
    } catch (JacksonException e) {
      throw new ApplyException("can't unmarshal \"" + ANNOTATION + "\" annotation: " + e.getOriginalMessage(), e);
    }
  }

  /** The annotation value for {@code desired}: its Go serialization with this annotation left out. */
  public static String serialize(JsonNode desired) {
    JsonNode annotations = desired.path("metadata").path("annotations");
    if (annotations.isObject() && annotations.has(ANNOTATION)) {
      desired = withoutAnnotation((ObjectNode) desired);
    }
    return GoJson.marshal(desired);
  }

  /** Removes the annotation from a copy of {@code object} and returns the copy. */
  static ObjectNode withoutAnnotation(ObjectNode object) {
    ObjectNode copy = object.deepCopy();
    JsonNode annotations = copy.path("metadata").path("annotations");
    if (annotations.isObject()) {
      ((ObjectNode) annotations).remove(ANNOTATION);
    }
    return copy;
  }

  /**
   * Sets the annotation on {@code target} (mutating it), creating {@code metadata} and {@code annotations} as
   * needed. An {@code annotations} value that is not an object is replaced, as Go's {@code SetAnnotations} does.
   */
  static void write(ObjectNode target, String value) {
    JsonNode metadata = target.get("metadata");
    if (metadata == null || !metadata.isObject()) {
      metadata = target.putObject("metadata");
    }
    JsonNode annotations = metadata.get("annotations");
    if (annotations == null || !annotations.isObject()) {
      annotations = ((ObjectNode) metadata).putObject("annotations");
    }
    ((ObjectNode) annotations).put(ANNOTATION, value);
  }
}
