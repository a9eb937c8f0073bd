package dev.metareactor.http;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A webhook's {@code etag} block. Every combination of the fields is safe (upstream panics when only
 * {@code cacheTimeoutSeconds} is set, and keeps entries forever when neither is).
 *
 * @param enabled whether responses are cached and revalidated with {@code If-None-Match}
 * @param cacheTimeoutSeconds how long an entry lives after it was stored; null, zero or negative means no expiry
 *     (the cache is still bounded in size, see {@link HookClientOptions#etagCacheMaxBytes()})
 * @param cacheCleanupSeconds accepted for compatibility; expired entries are removed by the cache itself, so no
 *     separate cleanup interval is needed
 */
public record EtagSettings(boolean enabled, @Nullable Integer cacheTimeoutSeconds,
    @Nullable Integer cacheCleanupSeconds) {

  /** ETags off, as when the block is absent. */
  public static final EtagSettings DISABLED = new EtagSettings(false, null, null);

  /** How long entries live, when they expire at all. */
  public Optional<Duration> timeToLive() {
    return cacheTimeoutSeconds == null || cacheTimeoutSeconds <= 0
        ? Optional.empty()
        : Optional.of(Duration.ofSeconds(cacheTimeoutSeconds));
  }
}
