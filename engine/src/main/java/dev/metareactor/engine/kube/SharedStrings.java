package dev.metareactor.engine.kube;

/**
 * One copy of the strings that many cached objects repeat (API versions, kinds, namespaces, label and annotation
 * keys and values, finalizers, the owner's name and UID on each of its children), so that the children of 10,000
 * parents do not each keep their own.
 *
 * <p>Not {@link String#intern()}: that is a call into the JVM's native string table for every string of every object
 * read, which took about 1% of the engine's CPU in a 5,000-parent converge. This is a lossy table of a fixed size: a
 * string takes the slot its hash picks, replacing whatever other string was there, so the table never grows and
 * holds at most {@value #SLOTS} strings; a string that lost its slot is kept as a new copy the next time, which costs
 * memory, never correctness (nothing compares these strings by identity). What repeats in quick succession (the
 * children of one parent arrive together) or everywhere (a kind, a label key) keeps its slot.
 *
 * <p>Thread-safe without locks: a slot always holds one whole reference to an immutable string, so a race only
 * decides which of two equal or unequal strings stays.
 */
final class SharedStrings {

  /** A power of two. 16,384 references: 64 KB with compressed pointers, plus the strings held. */
  static final int SLOTS = 1 << 14;

  private static final String[] TABLE = new String[SLOTS];

  private SharedStrings() {}

  /** The copy of {@code value} kept here, or {@code value} itself, now kept. */
  static String share(String value) {
    int hash = value.hashCode();
    int slot = (hash ^ (hash >>> 16)) & (SLOTS - 1);
    String kept = TABLE[slot];
    if (kept != null && kept.equals(value)) {
      return kept;
    }
    TABLE[slot] = value;
    return value;
  }
}
