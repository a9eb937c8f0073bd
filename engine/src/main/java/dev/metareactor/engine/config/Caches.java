package dev.metareactor.engine.config;

import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * The one way the engine builds its in-memory caches (Caffeine), so that all of them keep their bookkeeping on the
 * thread that uses them.
 *
 * <p>Caffeine keeps a cache's eviction order and expiry up to date in a maintenance task, which by default it hands
 * to {@link java.util.concurrent.ForkJoinPool#commonPool()} after a burst of writes. The engine writes its caches on
 * every sync and many watch events (its own writes in flight, the children and status it wrote, settled children,
 * the hot-loop guard), so by default nearly every burst woke a pool thread: in a 5,000-parent converge and update
 * wave it was woken about 130,000 times and took 2.3 to 2.9 CPU-seconds, a third of them in the kernel, on a
 * machine whose two cores the API server needs. Run on the calling thread, the same maintenance is amortised over
 * Caffeine's buffers and guarded by its try-lock, so it never waits: safe on an event loop. None of the engine's
 * caches has a removal listener, so nothing else runs there.
 */
public final class Caches {

  private Caches() {}

  /** A builder whose cache does its maintenance on the thread that reads or writes it. */
  public static Caffeine<Object, Object> newBuilder() {
    return Caffeine.newBuilder().executor(Runnable::run);
  }
}
