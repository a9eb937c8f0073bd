package dev.metareactor.engine.controller.rolling;

import dev.metareactor.apply.GoJson;
import dev.metareactor.apply.JsonEquality;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The part of a parent that a ControllerRevision records: for each of {@code spec.parentResource.revisionHistory
 * .fieldPaths} (dot-separated, default {@code ["spec"]}) the parent's value at that path, at the same path in an
 * otherwise empty object. Two parents with equal patches are the same revision; a revision's parent is
 * materialised by writing its patch over the current parent ({@link #applyTo}).
 *
 * <p>Path semantics are Kubernetes' unstructured accessors', which Metacontroller uses: a missing member or a
 * {@code null} on the way means "not found" and the path is left out; a value on the way that is not an object is
 * an error; writing creates the objects on the way, replacing a {@code null}, and fails on any other non-object.
 *
 * @param fieldPaths the paths, in the order the controller lists them
 * @param fields the recorded fields (never shared: a deep copy of the parent's values)
 */
public record RevisionPatch(List<String> fieldPaths, ObjectNode fields) {

  /** Metacontroller's default when {@code revisionHistory.fieldPaths} is absent or empty. */
  public static final List<String> DEFAULT_FIELD_PATHS = List.of("spec");

  public RevisionPatch {
    fieldPaths = List.copyOf(fieldPaths);
    Objects.requireNonNull(fields, "fields");
  }

  /**
   * The patch of {@code parent} for {@code fieldPaths} (the default when empty).
   *
   * @throws IllegalArgumentException when a path runs through a value that is not an object
   */
  public static RevisionPatch of(JsonNode parent, List<String> fieldPaths) {
    List<String> paths = fieldPaths.isEmpty() ? DEFAULT_FIELD_PATHS : fieldPaths;
    ObjectNode fields = JsonNodeFactory.instance.objectNode();
    for (String path : paths) {
      String[] parts = path.split("\\.", -1);
      JsonNode value = find(parent, parts, path);
      if (value != null) {
        set(fields, parts, value, path);
      }
    }
    return new RevisionPatch(paths, fields);
  }

  /**
   * The patch recorded in a revision ({@code parentPatch}), read back for the same field paths.
   *
   * @throws IllegalArgumentException when {@code parentPatch} is not a JSON object
   */
  public static RevisionPatch recorded(@Nullable JsonNode parentPatch, List<String> fieldPaths) {
    if (parentPatch == null || !parentPatch.isObject()) {
      throw new IllegalArgumentException("parentPatch is not a JSON object");
    }
    return new RevisionPatch(fieldPaths.isEmpty() ? DEFAULT_FIELD_PATHS : fieldPaths,
        (ObjectNode) parentPatch.deepCopy());
  }

  /**
   * A copy of {@code parent} with every recorded field written over it: the parent as this revision saw it.
   * Paths this patch does not hold keep the current parent's values.
   *
   * @throws IllegalArgumentException when a path runs through a value of the parent that is not an object
   */
  public ObjectNode applyTo(JsonNode parent) {
    if (!parent.isObject()) {
      throw new IllegalArgumentException("the parent is not a JSON object");
    }
    ObjectNode copy = (ObjectNode) parent.deepCopy();
    for (String path : fieldPaths) {
      String[] parts = path.split("\\.", -1);
      JsonNode value = find(fields, parts, path);
      if (value != null) {
        set(copy, parts, value, path);
      }
    }
    return copy;
  }

  /**
   * Whether both record the same values: compared as the decoded JSON they are (an integral {@code 1} equals
   * {@code 1.0}), so that a patch read back from a revision matches the parent that wrote it.
   */
  public boolean sameAs(RevisionPatch other) {
    return JsonEquality.equal(fields, other.fields);
  }

  /** The patch as Go's {@code encoding/json} writes it: the revision's {@code parentPatch} and its name's input. */
  public byte[] goJson() {
    return GoJson.marshalUtf8(fields);
  }

  /** The value at the path, or {@code null} when it is not there (a JSON {@code null} there is a found value). */
  private static @Nullable JsonNode find(JsonNode root, String[] parts, String path) {
    @Nullable JsonNode value = root;
    for (int i = 0; i < parts.length; i++) {
      if (value == null || value.isNull()) {
        return null;
      }
      if (!value.isObject()) {
        throw new IllegalArgumentException(
            "field path " + path + ": " + prefix(parts, i) + " is a " + kind(value) + ", not an object");
      }
      value = value.get(parts[i]);
    }
    return value;
  }

  private static void set(ObjectNode root, String[] parts, JsonNode value, String path) {
    ObjectNode target = root;
    for (int i = 0; i < parts.length - 1; i++) {
      JsonNode next = target.get(parts[i]);
      if (next == null || next.isNull()) {
        target = target.putObject(parts[i]);
      } else if (next.isObject()) {
        target = (ObjectNode) next;
      } else {
        throw new IllegalArgumentException("field path " + path + ": " + prefix(parts, i + 1) + " is a "
            + kind(next) + ", not an object, so the value cannot be set");
      }
    }
    target.set(parts[parts.length - 1], value.deepCopy());
  }

  private static String prefix(String[] parts, int count) {
    return String.join(".", List.of(parts).subList(0, count));
  }

  private static String kind(JsonNode value) {
    return value.getNodeType().name().toLowerCase(Locale.ROOT);
  }
}
