package dev.metareactor.engine.kube;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.function.IntUnaryOperator;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The labels or annotations of a {@link KubeObject}: an immutable map of strings in the object's order, held in one
 * array of keys and values instead of a hash map's table and entries (a cached object's labels and annotations
 * took about 400 bytes in {@code LinkedHashMap}s, this takes about 60).
 *
 * <p>A long value ({@link #SLICE_FROM} bytes of JSON or more: a {@code last-applied-configuration} annotation, which
 * holds a whole object) is not copied into a String at all: the map keeps where it lies in the object's JSON, which
 * the object holds anyway (deflated, mostly: {@link StoredJson}), and decodes it when it is read. The engine reads
 * such values rarely (the apply strategies read the annotation from the object's tree), so the object's largest
 * field is stored once, not twice. The map therefore keeps the object's JSON reachable for as long as it is itself
 * reachable.
 *
 * <p>Lookups scan the keys: objects carry few labels and annotations, and a scan of a dozen keys costs less than
 * hashing one.
 */
final class MetadataStrings extends AbstractMap<String, String> {

  /** A value whose JSON (quotes and escapes included) is at least this long is kept as a {@link Slice}. */
  static final int SLICE_FROM = 64;

  private static final Object[] NO_ENTRIES = {};
  private static final int[] NO_BOUNDS = {};
  static final MetadataStrings EMPTY = new MetadataStrings(NO_ENTRIES);

  /** Key, value, key, value...: each key a String, each value a String or a {@link Slice}. */
  private final Object[] entries;

  private MetadataStrings(Object[] entries) {
    this.entries = entries;
  }

  /**
   * A string value in a JSON document: the bytes {@code [from, to)} of {@code json}, quotes included. Decoded on each
   * read (and the document inflated for it, when it is kept deflated).
   */
  private record Slice(StoredJson json, int from, int to) {

    String decode() {
      try (JsonParser parser = KubeJson.mapper().createParser(json.bytes(), from, to - from)) {
        if (parser.nextToken() != JsonToken.VALUE_STRING) {
          throw new IllegalStateException("not a JSON string at " + from);
        }
        return parser.getString();
      }
    }

    boolean sameBytes(Slice other) {
      return Arrays.equals(json.bytes(), from, to, other.json.bytes(), other.from, other.to);
    }
  }

  /** Collects the members of one JSON object of strings while its document is read. */
  static final class Builder {

    // Allocated on the first member: most objects have no annotations, many no labels.
    private Object[] entries = NO_ENTRIES;
    private int size;
    private int slices;
    /** Slice boundaries in the source document, moved into the object's own bytes by {@link #build}. */
    private int[] bounds = NO_BOUNDS;

    void put(String key, String value) {
      add(SharedStrings.share(key), SharedStrings.share(value));
    }

    /** A value kept where it lies in the source: {@code [from, to)}, its quotes included. */
    void putSlice(String key, int from, int to) {
      if (2 * slices + 2 > bounds.length) {
        bounds = Arrays.copyOf(bounds, Math.max(4, bounds.length * 2));
      }
      bounds[2 * slices] = from;
      bounds[2 * slices + 1] = to;
      slices++;
      add(SharedStrings.share(key), null);
    }

    private void add(String key, @Nullable String value) {
      if (size + 2 > entries.length) {
        entries = Arrays.copyOf(entries, Math.max(8, entries.length * 2));
      }
      entries[size++] = key;
      entries[size++] = value;
    }

    /**
     * The map, its slices in {@code json}, the bytes the object keeps.
     *
     * @param relocate where a byte of the source document lies in {@code json}
     */
    MetadataStrings build(StoredJson json, IntUnaryOperator relocate) {
      if (size == 0) {
        return EMPTY;
      }
      Object[] kept = Arrays.copyOf(entries, size);
      int slice = 0;
      for (int i = 1; i < size; i += 2) {
        if (kept[i] == null) {
          kept[i] = new Slice(json, relocate.applyAsInt(bounds[2 * slice]),
              relocate.applyAsInt(bounds[2 * slice + 1]));
          slice++;
        }
      }
      return new MetadataStrings(kept);
    }
  }

  /**
   * Reads a JSON object of strings, the parser on its {@code START_OBJECT} and reading {@code source} from its first
   * byte; values that are not strings are not kept. The parser is left on the object's {@code END_OBJECT}.
   *
   * @param slices whether long values are kept as slices (annotations) or all as Strings (labels, which selectors
   *     read all the time and which are at most 63 characters)
   */
  static Builder read(JsonParser parser, byte[] source, boolean slices) {
    Builder builder = new Builder();
    while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
      String key = parser.currentName();
      if (parser.nextToken() != JsonToken.VALUE_STRING) {
        parser.skipChildren();
        continue;
      }
      int from = (int) parser.currentTokenLocation().getByteOffset();
      int to = slices ? endOfString(source, from) : from;
      if (to - from >= SLICE_FROM) {
        builder.putSlice(key, from, to); // the parser skips the string's bytes without decoding them
      } else {
        builder.put(key, parser.getString());
      }
    }
    return builder;
  }

  /** The index after the closing quote of the JSON string whose opening quote is at {@code from}. */
  private static int endOfString(byte[] source, int from) {
    int at = from + 1;
    while (source[at] != '"') {
      at += source[at] == '\\' ? 2 : 1;
    }
    return at + 1;
  }

  private static String value(Object value) {
    return value instanceof Slice slice ? slice.decode() : (String) value;
  }

  @Override
  public int size() {
    return entries.length / 2;
  }

  @Override
  public boolean containsKey(@Nullable Object key) {
    return indexOf(key) >= 0;
  }

  @Override
  public @Nullable String get(@Nullable Object key) {
    int at = indexOf(key);
    return at < 0 ? null : value(entries[at + 1]);
  }

  private int indexOf(@Nullable Object key) {
    for (int i = 0; i < entries.length; i += 2) {
      if (entries[i].equals(key)) {
        return i;
      }
    }
    return -1;
  }

  @Override
  public Set<Map.Entry<String, String>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<String, String>> iterator() {
        return new Iterator<>() {
          private int at;

          @Override
          public boolean hasNext() {
            return at < entries.length;
          }

          @Override
          public Map.Entry<String, String> next() {
            if (at >= entries.length) {
              throw new NoSuchElementException();
            }
            Map.Entry<String, String> entry = new SimpleImmutableEntry<>((String) entries[at], value(entries[at + 1]));
            at += 2;
            return entry;
          }
        };
      }

      @Override
      public int size() {
        return entries.length / 2;
      }
    };
  }

  /**
   * Equal to any map of the same strings; against another of these in the same order, long values are compared by
   * their JSON bytes first (equal bytes, equal strings) and decoded only when the bytes differ.
   */
  @Override
  public boolean equals(@Nullable Object other) {
    if (other == this) {
      return true;
    }
    if (!(other instanceof MetadataStrings that) || that.entries.length != entries.length) {
      return super.equals(other);
    }
    for (int i = 0; i < entries.length; i += 2) {
      if (!entries[i].equals(that.entries[i])) {
        return super.equals(other); // the same members in another order
      }
      Object mine = entries[i + 1];
      Object theirs = that.entries[i + 1];
      boolean same = mine instanceof Slice a && theirs instanceof Slice b ? a.sameBytes(b) || value(a).equals(value(b))
          : value(mine).equals(value(theirs));
      if (!same) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return super.hashCode();
  }

  /** Whether the value of {@code key} is kept as a slice of the object's JSON rather than as a String (tests). */
  boolean keptInJson(String key) {
    int at = indexOf(Objects.requireNonNull(key, "key"));
    return at >= 0 && entries[at + 1] instanceof Slice;
  }
}
