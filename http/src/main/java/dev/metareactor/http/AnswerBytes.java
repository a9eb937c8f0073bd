package dev.metareactor.http;

import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Counts the bytes of the hook answers received by the {@link Hook#call}s made under a Reactor context that carries
 * it ({@link #into}): the caller learns how large its answers were without the client keeping or re-serializing
 * them. An answer served from the ETag cache counts nothing (no body came); a failed call counts nothing.
 */
public final class AnswerBytes {

  private static final Object KEY = AnswerBytes.class;

  private final AtomicLong total = new AtomicLong();

  /** {@code context} with this count for the hook calls made under it. */
  public Context into(Context context) {
    return context.put(KEY, this);
  }

  /** The count the calls under {@code context} add to, or {@code null}. */
  static @Nullable AnswerBytes of(ContextView context) {
    return context.getOrDefault(KEY, null);
  }

  void add(long bytes) {
    total.addAndGet(bytes);
  }

  /** The bytes of the answers received so far. */
  public long total() {
    return total.get();
  }
}
