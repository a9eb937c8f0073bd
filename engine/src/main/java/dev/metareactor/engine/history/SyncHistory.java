package dev.metareactor.engine.history;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The engine's ring of recent syncs: for each parent its last {@code perParent} syncs ({@link SyncEntry}), bounded in
 * total memory. Every entry is weighed when it is added ({@link SyncEntry#bytes()}, an estimate from above of what it
 * keeps on the heap, its strings counted in full) and so is every parent's own bookkeeping ({@link #PARENT_BYTES} and
 * its names); when the total passes {@code maxBytes}, the parents synced least recently are forgotten, whole, until
 * it fits again. So the ring never holds more than {@code maxBytes} plus one parent's ring (of at most {@code
 * perParent} entries); at the defaults, {@value #DEFAULT_PER_PARENT} syncs a parent in {@value #DEFAULT_MAX_BYTES}
 * bytes (32 MiB), a sync of a few causes and writes weighing 0.5 to 1.5 KiB: some 2,000 to 4,000 parents' full rings,
 * and a fleet larger than that keeps its most recently synced parents.
 *
 * <p>One lock guards it all: an add (one per sync, at its end) is a map lookup and an append; the pages
 * ({@link #parent}, {@link #parents}) copy what they show under it and are built outside it.
 */
public final class SyncHistory {

  /** How many syncs a parent keeps by default. */
  public static final int DEFAULT_PER_PARENT = 16;
  /** How many bytes the ring may take by default. */
  public static final long DEFAULT_MAX_BYTES = 32L * 1024 * 1024;
  /** No ring: nothing is kept. */
  public static final SyncHistory OFF = new SyncHistory(0, 0);
  /**
   * What one parent's bookkeeping weighs besides its ring's array, its entries and its names: the map's entry (40),
   * the key (32), the ring's deque (24) and the counters (48).
   */
  static final long PARENT_BYTES = 40 + 32 + 24 + 48;

  private final int perParent;
  private final long maxBytes;
  /** Least recently synced first: an add moves its parent to the end. */
  private final LinkedHashMap<ParentRef, Parent> parents = new LinkedHashMap<>(16, 0.75f, true);
  private long bytes;
  private long forgotten;

  /**
   * @param perParent how many syncs a parent keeps; 0 keeps nothing
   * @param maxBytes what the ring may take in all, estimated (see the class documentation)
   */
  public SyncHistory(int perParent, long maxBytes) {
    if (perParent < 0 || maxBytes < 0) {
      throw new IllegalArgumentException("perParent and maxBytes must not be negative: " + perParent + ", "
          + maxBytes);
    }
    this.perParent = perParent;
    this.maxBytes = maxBytes;
  }

  /** Whether syncs are kept. */
  public boolean on() {
    return perParent > 0 && maxBytes > 0;
  }

  /** Adds the sync {@code entry} of {@code parent}, its oldest sync dropped when it has {@code perParent}. */
  public synchronized void add(ParentRef parent, SyncEntry entry) {
    if (!on()) {
      return;
    }
    Parent kept = parents.get(parent);
    if (kept == null) {
      kept = new Parent(parent, perParent);
      parents.put(parent, kept);
      bytes += kept.bytes;
    }
    long weight = entry.bytes();
    if (kept.syncs.size() == perParent) {
      bytes -= kept.syncs.removeFirst().bytes();
    }
    kept.syncs.addLast(entry);
    kept.count++;
    if (entry.failed()) {
      kept.failures++;
      kept.lastFailureMillis = entry.startedAtMillis();
    }
    bytes += weight;
    Iterator<Parent> oldest = parents.values().iterator();
    while (bytes > maxBytes && oldest.hasNext()) {
      Parent next = oldest.next();
      if (next == kept) {
        break; // the parent just synced stays, whatever it weighs
      }
      oldest.remove();
      bytes -= next.weight();
      forgotten++;
    }
  }

  /** What the ring takes now, estimated from above (see the class documentation). */
  public synchronized long bytes() {
    return bytes;
  }

  /** How many parents it holds. */
  public synchronized int size() {
    return parents.size();
  }

  /** How many syncs it holds. */
  public synchronized int entries() {
    int entries = 0;
    for (Parent parent : parents.values()) {
      entries += parent.syncs.size();
    }
    return entries;
  }

  /** How many parents it forgot to stay within its bytes. */
  public synchronized long forgotten() {
    return forgotten;
  }

  public int perParent() {
    return perParent;
  }

  public long maxBytes() {
    return maxBytes;
  }

  /** The kept syncs of {@code parent}, oldest first, or {@code null} when it has none. */
  public synchronized @Nullable Syncs parent(ParentRef parent) {
    // A read does not make a parent recently synced: get() on an access-ordered map would.
    for (Map.Entry<ParentRef, Parent> kept : parents.entrySet()) {
      if (kept.getKey().equals(parent)) {
        return kept.getValue().copy();
      }
    }
    return null;
  }

  /** The kept syncs of every parent of the controller {@code kind}/{@code controller}, least recently synced first. */
  public synchronized List<Syncs> parents(String kind, String controller) {
    List<Syncs> of = new ArrayList<>();
    for (Parent parent : parents.values()) {
      if (parent.ref.of(kind, controller)) {
        of.add(parent.copy());
      }
    }
    return of;
  }

  /**
   * What the ring holds of one parent.
   *
   * @param parent the parent
   * @param syncs its kept syncs, oldest first
   * @param count how many syncs it had since the ring first kept it
   * @param failures how many of them failed
   * @param lastFailureMillis when the last failed one started, 0 if none did
   */
  public record Syncs(ParentRef parent, List<SyncEntry> syncs, long count, long failures, long lastFailureMillis) {

    public Syncs {
      Objects.requireNonNull(parent, "parent");
      syncs = List.copyOf(syncs);
    }

    /** How many of the kept syncs started at or after {@code sinceMillis}. */
    public int since(long sinceMillis) {
      int since = 0;
      for (SyncEntry sync : syncs) {
        if (sync.startedAtMillis() >= sinceMillis) {
          since++;
        }
      }
      return since;
    }

    /** The busiest first: most syncs since {@code sinceMillis}, then most syncs. */
    public static Comparator<Syncs> busiest(long sinceMillis) {
      return Comparator.comparingInt((Syncs syncs) -> syncs.since(sinceMillis)).thenComparingLong(Syncs::count)
          .reversed();
    }
  }

  /** What a parent's bookkeeping weighs, without its entries. */
  static long ownWeight(ParentRef ref, int perParent) {
    return PARENT_BYTES + SyncEntry.align(16 + SyncEntry.REFERENCE * (perParent + 1L)) + SyncEntry.text(ref.kind())
        + SyncEntry.text(ref.controller()) + SyncEntry.text(ref.namespace()) + SyncEntry.text(ref.name());
  }

  /** What a parent and its kept syncs weigh in a ring of {@code perParent}. */
  static long weight(Syncs syncs, int perParent) {
    long weight = ownWeight(syncs.parent(), perParent);
    for (SyncEntry sync : syncs.syncs()) {
      weight += sync.bytes();
    }
    return weight;
  }

  /** One parent's ring and counters. */
  private static final class Parent {
    final ParentRef ref;
    final ArrayDeque<SyncEntry> syncs;
    /** Its own weight, without its entries. */
    final long bytes;
    long count;
    long failures;
    long lastFailureMillis;

    Parent(ParentRef ref, int perParent) {
      this.ref = ref;
      // Sized once: a deque of n elements has an array of n + 1 slots and never grows while it holds at most n.
      this.syncs = new ArrayDeque<>(perParent);
      this.bytes = ownWeight(ref, perParent);
    }

    long weight() {
      long weight = bytes;
      for (SyncEntry sync : syncs) {
        weight += sync.bytes();
      }
      return weight;
    }

    Syncs copy() {
      return new Syncs(ref, List.copyOf(syncs), count, failures, lastFailureMillis);
    }
  }
}
