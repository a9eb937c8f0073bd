package dev.metareactor.engine.kube;

import dev.metareactor.apply.FieldSet;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntUnaryOperator;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.util.RawValue;

/**
 * One Kubernetes object as the engine caches and reads it: the object's JSON, kept as compact UTF-8 bytes, and the
 * metadata the engine routes and indexes by, read once when the object arrives. Immutable and cheap to share
 * between threads.
 *
 * <p>{@code metadata.managedFields} is dropped on arrival: on a ConfigMap it is often the larger half of the object
 * (what controller-runtime's {@code TransformStripManagedFields} does for the same reason), and hooks see objects
 * without it. The entries the engine reads are kept aside: the {@link FieldSet} its own field manager applied
 * ({@link #appliedFields}), which tells server-side apply whether a child needs an apply at all, and the one it
 * applied to the status subresource ({@link #appliedStatusFields}). They exist only on objects the engine applied,
 * and are as large as what it applied.
 *
 * <p>{@link #toTree()} gives a fresh, mutable tree of the object (parsed from the bytes each time); {@link #raw()}
 * embeds the bytes in a larger tree without parsing them (a hook request carries the observed objects as they are).
 */
public final class KubeObject {

  private final StoredJson json;
  private final String apiVersion;
  private final String kind;
  private final String namespace;
  private final String name;
  private final @Nullable String uid;
  private final @Nullable String resourceVersion;
  private final long generation;
  private final @Nullable String deletionTimestamp;
  private final Map<String, String> labels;
  private final Map<String, String> annotations;
  private final List<String> finalizers;
  private final List<OwnerRef> ownerReferences;
  private final byte @Nullable [] appliedFields;
  private final byte @Nullable [] appliedStatusFields;

  private KubeObject(StoredJson json, Meta meta, Map<String, String> labels, Map<String, String> annotations) {
    this.json = json;
    this.apiVersion = meta.apiVersion;
    this.kind = meta.kind;
    this.namespace = meta.namespace;
    this.name = meta.name;
    this.uid = meta.uid;
    this.resourceVersion = meta.resourceVersion;
    this.generation = meta.generation;
    this.deletionTimestamp = meta.deletionTimestamp;
    this.labels = labels;
    this.annotations = annotations;
    this.finalizers = meta.finalizers;
    this.ownerReferences = meta.ownerReferences;
    this.appliedFields = meta.appliedFields;
    this.appliedStatusFields = meta.appliedStatusFields;
  }

  /**
   * Reads the object at the parser's {@code START_OBJECT}, the parser reading {@code source} from its first byte:
   * the object is tokenized once to capture the metadata the engine needs and to find where
   * {@code metadata.managedFields} lies, and its bytes are then copied out of {@code source} with that range left
   * out — nothing is decoded but the metadata, nothing re-encoded. The parser is left on the object's
   * {@code END_OBJECT}.
   *
   * @param apiVersion with {@code kind}, written first when the object lacks them (list items of built-in types do)
   * @param fieldManager the field manager whose server-side apply field set is kept ({@link #appliedFields}), or
   *     {@code null} to keep none
   * @throws IllegalArgumentException when the parser is not on an object or it has no {@code metadata.name}
   */
  public static KubeObject read(JsonParser parser, byte[] source, @Nullable String apiVersion,
      @Nullable String kind, @Nullable String fieldManager) {
    if (parser.currentToken() != JsonToken.START_OBJECT) {
      throw new IllegalArgumentException("not a JSON object");
    }
    int start = (int) parser.currentTokenLocation().getByteOffset();
    Meta meta = new Meta();
    int[] cut = null;
    while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
      String field = parser.currentName();
      JsonToken value = parser.nextToken();
      if (value == JsonToken.VALUE_STRING && field.equals("apiVersion")) {
        meta.apiVersion = parser.getString();
      } else if (value == JsonToken.VALUE_STRING && field.equals("kind")) {
        meta.kind = parser.getString();
      } else if (value == JsonToken.START_OBJECT && field.equals("metadata")) {
        cut = readMetadata(parser, source, meta, fieldManager);
      } else {
        parser.skipChildren();
      }
    }
    int end = (int) parser.currentTokenLocation().getByteOffset() + 1;
    if (meta.name.isEmpty()) {
      throw new IllegalArgumentException("not a Kubernetes object (no metadata.name)");
    }
    byte[] prefix = new byte[0];
    if (apiVersion != null && meta.apiVersion.isEmpty() && meta.kind.isEmpty()) {
      meta.apiVersion = apiVersion;
      meta.kind = Objects.requireNonNull(kind, "kind, with apiVersion");
      prefix = ("\"apiVersion\":" + KubeJson.quote(apiVersion) + ",\"kind\":" + KubeJson.quote(meta.kind) + ",")
          .getBytes(StandardCharsets.UTF_8);
    }
    StoredJson json = StoredJson.of(splice(source, start, end, prefix, cut));
    IntUnaryOperator relocate = relocation(start, prefix.length, cut);
    meta.apiVersion = SharedStrings.share(meta.apiVersion);
    meta.kind = SharedStrings.share(meta.kind);
    meta.namespace = SharedStrings.share(meta.namespace);
    return new KubeObject(json, meta, meta.labels.build(json, relocate), meta.annotations.build(json, relocate));
  }

  /**
   * Where a byte of the source at {@code at} lies in what {@link #splice} made of it: the object starts at
   * {@code start}, {@code prefix} bytes follow its first, and {@code cut} (if any) is gone.
   */
  private static IntUnaryOperator relocation(int start, int prefix, int @Nullable [] cut) {
    return at -> at - start + prefix - (cut != null && at >= cut[1] ? cut[1] - cut[0] : 0);
  }

  /** {@code source[start, end)} with {@code prefix} after its first byte ({) and {@code cut} (if any) left out. */
  private static byte[] splice(byte[] source, int start, int end, byte[] prefix, int @Nullable [] cut) {
    int cutLength = cut == null ? 0 : cut[1] - cut[0];
    byte[] out = new byte[end - start + prefix.length - cutLength];
    out[0] = source[start];
    System.arraycopy(prefix, 0, out, 1, prefix.length);
    int at = 1 + prefix.length;
    if (cut == null) {
      System.arraycopy(source, start + 1, out, at, end - start - 1);
    } else {
      System.arraycopy(source, start + 1, out, at, cut[0] - start - 1);
      at += cut[0] - start - 1;
      System.arraycopy(source, cut[1], out, at, end - cut[1]);
    }
    return out;
  }

  /**
   * Reads {@code metadata}, the parser on its {@code START_OBJECT}.
   *
   * @return the byte range {@code [from, to)} to leave out for {@code managedFields}, with one adjoining comma,
   *     or {@code null} when there is none
   */
  private static int @Nullable [] readMetadata(JsonParser parser, byte[] source, Meta meta,
      @Nullable String fieldManager) {
    int[] cut = null;
    boolean first = true;
    while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
      String field = parser.currentName();
      int nameAt = (int) parser.currentTokenLocation().getByteOffset();
      JsonToken value = parser.nextToken();
      switch (field) {
        case "managedFields" -> {
          if (fieldManager != null && value == JsonToken.START_ARRAY) {
            appliedFields(parser, source, fieldManager, meta);
          } else {
            parser.skipChildren();
          }
          int valueEnd = (int) parser.currentTokenLocation().getByteOffset() + 1;
          cut = first ? withFollowingComma(source, nameAt, valueEnd) : withPrecedingComma(source, nameAt, valueEnd);
        }
        case "labels", "annotations" -> {
          if (value == JsonToken.START_OBJECT) {
            boolean annotations = field.equals("annotations");
            MetadataStrings.Builder map = MetadataStrings.read(parser, source, annotations);
            if (annotations) {
              meta.annotations = map;
            } else {
              meta.labels = map;
            }
          } else {
            parser.skipChildren();
          }
        }
        case "finalizers" -> {
          if (value == JsonToken.START_ARRAY) {
            meta.finalizers = finalizers(KubeJson.readValue(parser));
          } else {
            parser.skipChildren();
          }
        }
        case "ownerReferences" -> {
          if (value == JsonToken.START_ARRAY) {
            meta.ownerReferences = ownerReferences(KubeJson.readValue(parser));
          } else {
            parser.skipChildren();
          }
        }
        case "generation" -> {
          if (value == JsonToken.VALUE_NUMBER_INT) {
            meta.generation = parser.getLongValue();
          }
        }
        default -> {
          if (value == JsonToken.VALUE_STRING) {
            switch (field) {
              case "name" -> meta.name = parser.getString();
              case "namespace" -> meta.namespace = parser.getString();
              case "uid" -> meta.uid = parser.getString();
              case "resourceVersion" -> meta.resourceVersion = parser.getString();
              case "deletionTimestamp" -> meta.deletionTimestamp = parser.getString();
              default -> { }
            }
          } else {
            parser.skipChildren();
          }
        }
      }
      first = false;
    }
    return cut;
  }

  /**
   * Keeps in {@code meta} the bytes of the {@code fieldsV1} of {@code fieldManager}'s {@code Apply} entries of the
   * main resource and of the status subresource; the parser on the {@code managedFields} array's start, left on its
   * end.
   */
  private static void appliedFields(JsonParser parser, byte[] source, String fieldManager, Meta meta) {
    while (parser.nextToken() == JsonToken.START_OBJECT) {
      String manager = "";
      String operation = "";
      String subresource = "";
      int from = -1;
      int to = -1;
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        if (value == JsonToken.VALUE_STRING) {
          switch (field) {
            case "manager" -> manager = parser.getString();
            case "operation" -> operation = parser.getString();
            case "subresource" -> subresource = parser.getString();
            default -> { }
          }
        } else if (field.equals("fieldsV1") && value == JsonToken.START_OBJECT) {
          from = (int) parser.currentTokenLocation().getByteOffset();
          parser.skipChildren();
          to = (int) parser.currentTokenLocation().getByteOffset() + 1;
        } else {
          parser.skipChildren();
        }
      }
      if (from >= 0 && manager.equals(fieldManager) && operation.equals("Apply")) {
        if (subresource.isEmpty()) {
          meta.appliedFields = Arrays.copyOfRange(source, from, to);
        } else if (subresource.equals("status")) {
          meta.appliedStatusFields = Arrays.copyOfRange(source, from, to);
        }
      }
    }
  }

  /** A member that is not the first: the comma before it goes with it. */
  private static int[] withPrecedingComma(byte[] source, int nameAt, int valueEnd) {
    int from = nameAt - 1;
    while (source[from] != ',') {
      from--;
    }
    return new int[] {from, valueEnd};
  }

  /** The first member: the comma after it goes with it, if another member follows. */
  private static int[] withFollowingComma(byte[] source, int nameAt, int valueEnd) {
    int to = valueEnd;
    while (to < source.length && isSpace(source[to])) {
      to++;
    }
    return new int[] {nameAt, to < source.length && source[to] == ',' ? to + 1 : valueEnd};
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\n' || b == '\r' || b == '\t';
  }

  /** What {@link #read} captures of the metadata. */
  private static final class Meta {
    String apiVersion = "";
    String kind = "";
    String namespace = "";
    String name = "";
    @Nullable String uid;
    @Nullable String resourceVersion;
    long generation;
    @Nullable String deletionTimestamp;
    MetadataStrings.Builder labels = new MetadataStrings.Builder();
    MetadataStrings.Builder annotations = new MetadataStrings.Builder();
    List<String> finalizers = List.of();
    List<OwnerRef> ownerReferences = List.of();
    byte @Nullable [] appliedFields;
    byte @Nullable [] appliedStatusFields;
  }

  /**
   * The object a tree describes (its {@code metadata.managedFields} left out).
   *
   * @throws IllegalArgumentException when the tree is not an object with {@code metadata.name}
   */
  public static KubeObject of(ObjectNode object) {
    Objects.requireNonNull(object, "object");
    return parse(KubeJson.bytes(object));
  }

  /** The object in UTF-8 JSON. */
  public static KubeObject parse(byte[] json) {
    return parse(json, null);
  }

  /** The object in UTF-8 JSON, with the field set {@code fieldManager} applied ({@link #appliedFields}). */
  public static KubeObject parse(byte[] json, @Nullable String fieldManager) {
    try (JsonParser parser = KubeJson.objectParser(json)) {
      parser.nextToken();
      return read(parser, json, null, null, fieldManager);
    }
  }

  // ---- what the engine routes by

  public String apiVersion() {
    return apiVersion;
  }

  public String kind() {
    return kind;
  }

  /** {@code ""} for a cluster-scoped object. */
  public String namespace() {
    return namespace;
  }

  public String name() {
    return name;
  }

  /** {@code null} for an object the API server has not stored yet. */
  public @Nullable String uid() {
    return uid;
  }

  /**
   * The UID of an object read from the API server or an informer's cache, which always has one.
   *
   * @throws NullPointerException for an object the API server has not stored
   */
  public String storedUid() {
    return Objects.requireNonNull(uid, "an object the API server has stored has a uid");
  }

  /** {@code null} for an object the API server has not stored yet. */
  public @Nullable String resourceVersion() {
    return resourceVersion;
  }

  /** {@code metadata.generation}, 0 when absent. */
  public long generation() {
    return generation;
  }

  /** {@code null} unless the object is being deleted. */
  public @Nullable String deletionTimestamp() {
    return deletionTimestamp;
  }

  public boolean deleting() {
    return deletionTimestamp != null;
  }

  /** Never {@code null}; unmodifiable. */
  public Map<String, String> labels() {
    return labels;
  }

  /** Never {@code null}; unmodifiable. */
  public Map<String, String> annotations() {
    return annotations;
  }

  /** Never {@code null}; unmodifiable. */
  public List<String> finalizers() {
    return finalizers;
  }

  /** Never {@code null}; unmodifiable. */
  public List<OwnerRef> ownerReferences() {
    return ownerReferences;
  }

  /** The owner reference with {@code controller: true}, or {@code null}. */
  public @Nullable OwnerRef controller() {
    for (OwnerRef ref : ownerReferences) {
      if (ref.controller()) {
        return ref;
      }
    }
    return null;
  }

  // ---- the whole object

  /** A fresh, mutable tree of the object. */
  public ObjectNode toTree() {
    return (ObjectNode) KubeJson.mapper().readTree(json.bytes());
  }

  /**
   * The object's JSON, for embedding in a tree that is only written (a hook request), never read: the bytes are
   * written as they are, without a copy into a String.
   */
  public RawValue raw() {
    return new RawValue(new RawJson(json));
  }

  /**
   * The fields the engine's field manager owns through server-side apply ({@code managedFields}' {@code Apply} entry
   * of that manager), or {@code null} when it applied none, or the object was read without keeping them.
   */
  public @Nullable FieldSet appliedFields() {
    return appliedFields == null ? null : FieldSet.parse(appliedFields);
  }

  /**
   * The fields of the status subresource the engine's field manager owns through server-side apply (its {@code
   * Apply} entry with {@code subresource: status}: a child's status the hook answered, {@code
   * metareactor.dev/write-child-status}), or {@code null} when it applied none, or the object was read without
   * keeping them.
   */
  public @Nullable FieldSet appliedStatusFields() {
    return appliedStatusFields == null ? null : FieldSet.parse(appliedStatusFields);
  }

  /** Size of the JSON in bytes. */
  public int size() {
    return json.length();
  }

  /** Bytes the object keeps for its JSON: {@link #size}, or less when it is kept deflated ({@link StoredJson}). */
  public int storedSize() {
    return json.storedSize();
  }

  /** {@code Kind namespace/name}, for logs and messages. */
  public String describe() {
    return kind + " " + namespacedName();
  }

  /** {@code namespace/name}, or {@code name} for a cluster-scoped object. */
  public String namespacedName() {
    return namespacedName(namespace, name);
  }

  /** {@code namespace/name}, or {@code name} when {@code namespace} is empty or {@code null}. */
  public static String namespacedName(String namespace, String name) {
    return namespace == null || namespace.isEmpty() ? name : namespace + "/" + name;
  }

  @Override
  public String toString() {
    return describe() + "@" + resourceVersion;
  }

  // ---- reading metadata

  private static String text(@Nullable JsonNode node) {
    return node != null && node.isString() ? node.stringValue() : "";
  }



  private static List<String> finalizers(JsonNode node) {
    if (node == null || !node.isArray() || node.isEmpty()) {
      return List.of();
    }
    List<String> values = new ArrayList<>(node.size());
    for (JsonNode value : node) {
      if (value.isString()) {
        values.add(SharedStrings.share(value.stringValue()));
      }
    }
    return List.copyOf(values);
  }

  private static List<OwnerRef> ownerReferences(JsonNode node) {
    if (node == null || !node.isArray() || node.isEmpty()) {
      return List.of();
    }
    List<OwnerRef> refs = new ArrayList<>(node.size());
    for (JsonNode ref : node) {
      refs.add(new OwnerRef(SharedStrings.share(text(ref.get("apiVersion"))),
          SharedStrings.share(text(ref.get("kind"))), SharedStrings.share(text(ref.get("name"))),
          SharedStrings.share(text(ref.get("uid"))), ref.path("controller").asBoolean(false),
          ref.path("blockOwnerDeletion").asBoolean(false)));
    }
    return List.copyOf(refs);
  }
}
