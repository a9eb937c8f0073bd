package dev.metareactor.engine.history;

import dev.metareactor.engine.queue.Trigger;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One sync of one parent as the ring of recent syncs keeps it: figures and short strings only, no JSON body. Every
 * string is cut to {@link #MAX_TEXT} characters ({@link #bounded}), at most {@code Causes.MAX_KEPT} causes and
 * {@code SyncRecord.SUMMARY_WRITES} writes are kept, so that {@link #bytes()} is bounded.
 *
 * @param startedAtMillis when the sync started (epoch milliseconds)
 * @param causes why it ran: the distinct causes of the enqueues it coalesced, the first few
 * @param causesLeftOut how many more distinct causes came
 * @param waitedMicros how long it waited in the queue, from the first enqueue it coalesced to its start
 * @param hookCalls how many hook calls it made
 * @param hookMicros how long they took together
 * @param answerBytes how many bytes they answered (an answer from the ETag cache counts none)
 * @param writes the first writes it made
 * @param writesLeftOut how many more it made
 * @param outcome {@code success}, {@code resync after <n> s}, {@code failed}, {@code retry after <n> ms} or
 *     {@code cancelled}
 * @param error the error that ended it, cut short, or {@code null}
 */
public record SyncEntry(long startedAtMillis, List<Trigger> causes, int causesLeftOut, long waitedMicros,
    int hookCalls, long hookMicros, long answerBytes, List<Write> writes, int writesLeftOut, String outcome,
    @Nullable String error) {

  /** The longest string an entry keeps: a Kubernetes name's longest (253), a little more for an error. */
  public static final int MAX_TEXT = 256;

  /**
   * One write.
   *
   * @param verb {@code create}, {@code update}, {@code patch}, {@code apply}, {@code delete}, {@code status}, ...
   * @param kind the object's kind
   * @param namespace its namespace, {@code ""} when cluster-scoped
   * @param name its name
   * @param result {@code 2xx}, the HTTP code of a refusal, or {@code error}
   */
  public record Write(String verb, String kind, String namespace, String name, String result) {

    public Write {
      verb = bounded(verb);
      kind = bounded(kind);
      namespace = bounded(namespace);
      name = bounded(name);
      result = bounded(result);
    }

    long bytes() {
      return OBJECT + 5 * REFERENCE + text(verb) + text(kind) + text(namespace) + text(name) + text(result);
    }
  }

  // Estimated sizes (64-bit JVM, compressed pointers, 8-byte alignment), rounded up so that the estimate is never
  // below what the objects take.
  static final long OBJECT = 16;
  static final long REFERENCE = 4;
  static final long LIST = 40;
  /** A String object (24) and its array's header (16). */
  static final long STRING = 40;

  public SyncEntry {
    causes = List.copyOf(Objects.requireNonNull(causes, "causes"));
    writes = List.copyOf(Objects.requireNonNull(writes, "writes"));
    Objects.requireNonNull(outcome, "outcome");
    error = error == null ? null : bounded(error);
  }

  /** {@code text} cut to {@link #MAX_TEXT} characters ({@code text} itself when it is not longer). */
  public static String bounded(String text) {
    return text.length() <= MAX_TEXT ? text : text.substring(0, MAX_TEXT);
  }

  /**
   * What this entry keeps on the heap, estimated from above: its own fields, its lists, and every string it points
   * to, counted as if it were its own (a cause's and a write's names are often the informer cache's strings, shared)
   * at two bytes a character. A cause's strings are the router's, so they are counted but not cut: a Kubernetes
   * kind, namespace and name are at most 63, 63 and 253 characters.
   */
  public long bytes() {
    long bytes = OBJECT + 4 * 8 + 4 * 4 + 4 * REFERENCE + 2 * LIST + text(outcome) + (error == null ? 0 : text(error));
    for (Trigger trigger : causes) {
      bytes += REFERENCE + OBJECT + 5 * REFERENCE + text(trigger.kind()) + text(trigger.namespace())
          + text(trigger.name());
    }
    for (Write write : writes) {
      bytes += REFERENCE + write.bytes();
    }
    return bytes;
  }

  /** A string's size, at two bytes a character. */
  static long text(String text) {
    return STRING + align(2L * text.length());
  }

  static long align(long bytes) {
    return (bytes + 7) & ~7L;
  }

  /**
   * Whether the sync failed. A run told to come back later (a hook's 429 with {@code Retry-After}, a parent handed
   * over from another shard whose owned objects are not cached yet) keeps its reason as {@link #error} but did not
   * fail: counted as failures, a shard's every move would look like a failing parent.
   */
  public boolean failed() {
    return outcome.equals("failed");
  }
}
