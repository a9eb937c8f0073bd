package dev.metareactor.engine.selector;

import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Owners (parents) indexed by the label selectors they claim with, to answer "whose selector matches this object's
 * labels?" without testing every owner's selector: the question every orphan event asks.
 *
 * <p>An owner is filed under one label its selector requires with an exact value ({@code app=web}, or a
 * single-value {@code In}); any matching object carries that label, so looking up each label of the object finds
 * every candidate. An owner whose selector requires no exact value ({@code Exists}, {@code NotIn}, ...) is filed
 * under its namespace alone and is a candidate for every object there. Candidates are then checked against the
 * whole selector, so the answer is exact.
 *
 * <p>Namespaces: an owner in namespace {@code ns} only matches objects in {@code ns}; an owner filed under
 * {@code ""} (cluster-scoped) matches objects in every namespace.
 *
 * <p>Thread-safe. Writes are serialized (removing an emptied bucket must not race an add to it); {@link #matching}
 * does not lock and sees the state before or after a concurrent write.
 * Memory: one small entry per indexed owner.
 *
 * @param <K> the owner key (records with value equality)
 */
public final class SelectorIndex<K> {

  private record Entry(String namespace, LabelSelector selector, String bucket) {}

  private static final String ANY_LABEL = "";

  private final Map<K, Entry> entries = new ConcurrentHashMap<>();
  /** namespace -> (label "k=v", or {@link #ANY_LABEL}) -> owners (most buckets hold one: {@link IndexBucket}). */
  private final Map<String, Map<String, IndexBucket<K, K>>> buckets = new ConcurrentHashMap<>();

  /** Files (or re-files) {@code owner} with its selector. */
  public synchronized void put(K owner, String namespace, LabelSelector selector) {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(selector, "selector");
    Entry entry = new Entry(namespace, selector, bucketOf(selector));
    Entry previous = entries.put(owner, entry);
    if (previous != null && !(previous.namespace().equals(namespace) && previous.bucket().equals(entry.bucket()))) {
      unfile(owner, previous);
    }
    buckets.computeIfAbsent(namespace, ns -> new ConcurrentHashMap<>())
        .compute(entry.bucket(), (bucket, owners) -> owners == null ? IndexBucket.of(owner, owner)
            : owners.with(owner, owner));
  }

  /** Forgets {@code owner}. */
  public synchronized void remove(K owner) {
    Entry previous = entries.remove(owner);
    if (previous != null) {
      unfile(owner, previous);
    }
  }

  /** The owners whose selector matches an object in {@code namespace} with {@code labels}. */
  public Set<K> matching(String namespace, @Nullable Map<String, String> labels) {
    Map<String, String> present = labels == null ? Map.of() : labels;
    Set<K> result = new HashSet<>();
    collect(namespace, present, result);
    if (!namespace.isEmpty()) {
      collect("", present, result);
    }
    return result;
  }

  /** Whether {@code owner} is filed. */
  public boolean contains(K owner) {
    return entries.containsKey(owner);
  }

  /** How many owners are filed (for tests and metrics). */
  public int size() {
    return entries.size();
  }

  private void collect(String namespace, Map<String, String> labels, Set<K> result) {
    Map<String, IndexBucket<K, K>> byLabel = buckets.get(namespace);
    if (byLabel == null) {
      return;
    }
    addMatching(byLabel.get(ANY_LABEL), labels, result);
    labels.forEach((key, value) -> addMatching(byLabel.get(key + "=" + value), labels, result));
  }

  private void addMatching(@Nullable IndexBucket<K, K> owners, Map<String, String> labels, Set<K> result) {
    if (owners == null) {
      return;
    }
    for (K owner : owners.values()) {
      Entry entry = entries.get(owner);
      if (entry != null && entry.selector().matches(labels)) {
        result.add(owner);
      }
    }
  }

  private void unfile(K owner, Entry entry) {
    Map<String, IndexBucket<K, K>> byLabel = buckets.get(entry.namespace());
    if (byLabel != null) {
      byLabel.computeIfPresent(entry.bucket(), (bucket, owners) -> owners.without(owner));
    }
  }

  /** The one label an owner is filed under: the first exact requirement in sorted order, or none. */
  private static String bucketOf(LabelSelector selector) {
    return selector.requiredLabels().entrySet().stream()
        .map(e -> e.getKey() + "=" + e.getValue())
        .sorted()
        .findFirst()
        .orElse(ANY_LABEL);
  }
}
