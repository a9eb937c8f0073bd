package dev.metareactor.http;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The ETag cache of all hooks: for each (hook, root object), the {@code ETag} and parsed body of the last 200 answer
 * that carried one. One Caffeine cache serves every hook so the memory bound is global: entries weigh what they hold,
 * the parsed tree's estimated heap (see {@link WeighedParser}; 3 to 10 times the answer's bytes for real objects, up
 * to 36 for hostile shapes, so weighing the bytes would let the cache hold several times its bound), and past
 * {@link HookClientOptions#etagCacheMaxBytes()} Caffeine evicts the entries least likely to be used again (by
 * recency and frequency). A lost entry only costs one full answer. Each entry
 * expires after its own hook's {@code cacheTimeoutSeconds}, or never (size still bounds it).
 *
 * <p>Thread-safe and non-blocking: safe to call from event loops.
 */
final class EtagCache {

  /** One hook's entry for one object; the hook is named by its endpoint and identity. */
  record Key(String hook, CacheKey root) {}

  /**
   * A stored answer.
   *
   * @param timeToLiveNanos how long it lives after being stored, {@code Long.MAX_VALUE} for ever
   */
  record Entry(String etag, JsonNode body, int weight, long timeToLiveNanos) {}

  private final Cache<Key, Entry> cache;

  EtagCache(long maxBytes, Clock clock) {
    Objects.requireNonNull(clock, "clock");
    this.cache = Caffeine.newBuilder()
        // Maintenance on the calling thread (an event loop), under Caffeine's try-lock, as the engine's caches do
        // (engine config.Caches): not a ForkJoinPool task and a woken pool thread per burst of writes.
        .executor(Runnable::run)
        .maximumWeight(maxBytes)
        .weigher((Key key, Entry entry) -> entry.weight())
        .expireAfter(new PerEntryTimeToLive())
        .ticker(ticker(clock))
        .build();
  }

  @Nullable Entry get(Key key) {
    return cache.getIfPresent(key);
  }

  /**
   * @param treeWeight the parsed body's estimated heap in bytes
   */
  void put(Key key, String etag, JsonNode body, long treeWeight, @Nullable Duration timeToLive) {
    long ttl = timeToLive == null ? Long.MAX_VALUE : timeToLive.toNanos();
    // The entry, key and tag, roughly: small next to most trees, but they keep tiny bodies from weighing nothing.
    long weight = treeWeight + 2L * etag.length() + 128;
    cache.put(key, new Entry(etag, body, (int) Math.min(Integer.MAX_VALUE, weight), ttl));
  }

  void invalidate(Key key) {
    cache.invalidate(key);
  }

  /** Applies pending evictions; for tests that look at sizes. */
  long estimatedSize() {
    cache.cleanUp();
    return cache.estimatedSize();
  }

  /** Nanosecond ticks from the clock, so tests can move time. */
  private static Ticker ticker(Clock clock) {
    if (clock.equals(Clock.systemUTC()) || clock.equals(Clock.systemDefaultZone())) {
      return Ticker.systemTicker();
    }
    return () -> {
      Instant now = clock.instant();
      return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    };
  }

  private static final class PerEntryTimeToLive implements Expiry<Key, Entry> {
    @Override
    public long expireAfterCreate(Key key, Entry entry, long currentTime) {
      return entry.timeToLiveNanos();
    }

    @Override
    public long expireAfterUpdate(Key key, Entry entry, long currentTime, long currentDuration) {
      return entry.timeToLiveNanos();
    }

    @Override
    public long expireAfterRead(Key key, Entry entry, long currentTime, long currentDuration) {
      return currentDuration;
    }
  }
}
