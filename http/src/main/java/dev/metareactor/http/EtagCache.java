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
 * that carried one. One Caffeine cache serves every hook so the memory bound is global: entries weigh their body's
 * size in bytes, and past {@link HookClientOptions#etagCacheMaxBytes()} Caffeine evicts the entries least likely to
 * be used again (by recency and frequency). A lost entry only costs one full answer. Each entry
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
        .maximumWeight(maxBytes)
        .weigher((Key key, Entry entry) -> entry.weight())
        .expireAfter(new PerEntryTimeToLive())
        .ticker(ticker(clock))
        .build();
  }

  @Nullable Entry get(Key key) {
    return cache.getIfPresent(key);
  }

  void put(Key key, String etag, JsonNode body, int bodyBytes, @Nullable Duration timeToLive) {
    long ttl = timeToLive == null ? Long.MAX_VALUE : timeToLive.toNanos();
    // The key and etag are small next to most bodies; counting them keeps tiny bodies from weighing nothing.
    int weight = bodyBytes + etag.length() + 64;
    cache.put(key, new Entry(etag, body, weight, ttl));
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
