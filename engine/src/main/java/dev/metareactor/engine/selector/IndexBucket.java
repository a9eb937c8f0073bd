package dev.metareactor.engine.selector;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * What one key of an in-memory index files: in an informer's index, the objects under one key (a parent's children,
 * the objects carrying one label value, a namespace's objects); in a {@link SelectorIndex}, the owners filed under
 * one label. Changed by one writer at a time (an informer's serial worker, the index's lock), read from any thread.
 *
 * <p>Why not a {@link ConcurrentHashMap} for each: most buckets hold a few entries (a parent's three children, the
 * one parent whose selector names a label value), and a map of three took about 210 bytes (the map, its table of 8
 * and a node each) where an array of three takes about 60; at 10,000 parents the informers' indexes held 20,000 such
 * maps and the parents' selector index 10,000 sets, some 6 MB. So a bucket of up to {@value #FEW} entries is an
 * immutable array of keys and values, replaced whole by each change (a copy of at most {@code 2 * FEW} references);
 * a larger one is a concurrent map changed in place, whose values a reader copies weakly consistently, as every
 * bucket was before.
 *
 * @param <K> what names an entry
 * @param <V> the entry
 */
public abstract sealed class IndexBucket<K, V> {

  /** The most objects a bucket keeps in an array. */
  public static final int FEW = 8;

  private IndexBucket() {}

  /** A bucket of one object. */
  public static <K, V> IndexBucket<K, V> of(K key, V value) {
    return new Few<>(new Object[] {Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value")});
  }

  /** This bucket with {@code value} filed under {@code key} (replacing what was): this one, changed, or a new one. */
  public abstract IndexBucket<K, V> with(K key, V value);

  /** This bucket without {@code key}: this one, changed, a new one, or {@code null} when nothing is left. */
  public abstract @Nullable IndexBucket<K, V> without(K key);

  /** The objects filed here now: a new list, the caller's to keep. */
  public abstract List<V> values();

  public abstract int size();

  /** Up to {@link #FEW} objects: key, value, key, value... Never changed once made. */
  private static final class Few<K, V> extends IndexBucket<K, V> {
    private final Object[] entries;

    Few(Object[] entries) {
      this.entries = entries;
    }

    private int indexOf(K key) {
      for (int i = 0; i < entries.length; i += 2) {
        if (entries[i].equals(key)) {
          return i;
        }
      }
      return -1;
    }

    @Override
    public IndexBucket<K, V> with(K key, V value) {
      Objects.requireNonNull(value, "value");
      int at = indexOf(Objects.requireNonNull(key, "key"));
      if (at >= 0) {
        if (entries[at + 1] == value) {
          return this;
        }
        Object[] changed = entries.clone();
        changed[at + 1] = value;
        return new Few<>(changed);
      }
      if (size() < FEW) {
        Object[] grown = Arrays.copyOf(entries, entries.length + 2);
        grown[entries.length] = key;
        grown[entries.length + 1] = value;
        return new Few<>(grown);
      }
      Many<K, V> many = new Many<>();
      for (int i = 0; i < entries.length; i += 2) {
        many.objects.put(key(i), value(i));
      }
      many.objects.put(key, value);
      return many;
    }

    @Override
    public @Nullable IndexBucket<K, V> without(K key) {
      int at = indexOf(key);
      if (at < 0) {
        return this;
      }
      if (entries.length == 2) {
        return null;
      }
      Object[] shrunk = new Object[entries.length - 2];
      System.arraycopy(entries, 0, shrunk, 0, at);
      System.arraycopy(entries, at + 2, shrunk, at, entries.length - at - 2);
      return new Few<>(shrunk);
    }

    @Override
    public List<V> values() {
      List<V> values = new ArrayList<>(size());
      for (int i = 0; i < entries.length; i += 2) {
        values.add(value(i));
      }
      return values;
    }

    @Override
    public int size() {
      return entries.length / 2;
    }

    @SuppressWarnings("unchecked")
    private K key(int at) {
      return (K) entries[at];
    }

    @SuppressWarnings("unchecked")
    private V value(int at) {
      return (V) entries[at + 1];
    }
  }

  /** More than {@link #FEW} objects (it stays a map if it shrinks again: such a key tends to fill up again). */
  private static final class Many<K, V> extends IndexBucket<K, V> {
    private final Map<K, V> objects = new ConcurrentHashMap<>();

    @Override
    public IndexBucket<K, V> with(K key, V value) {
      objects.put(key, value);
      return this;
    }

    @Override
    public @Nullable IndexBucket<K, V> without(K key) {
      objects.remove(key);
      return objects.isEmpty() ? null : this;
    }

    @Override
    public List<V> values() {
      return new ArrayList<>(objects.values());
    }

    @Override
    public int size() {
      return objects.size();
    }
  }
}
