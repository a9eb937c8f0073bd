package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.START;
import static dev.metareactor.http.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class EtagCacheTest {

  private final MutableClock clock = new MutableClock(START);

  private static EtagCache.Key key(int i) {
    return new EtagCache.Key("sync hook http://x/sync", new CacheKey("Widget", "default", "w" + i));
  }

  @Test
  void theCacheStaysWithinItsByteBudgetEvenWithoutExpiry() {
    EtagCache cache = new EtagCache(100_000, clock);

    for (int i = 0; i < 1_000; i++) {
      cache.put(key(i), "\"" + i + "\"", json("{}"), 1_000, null);
    }

    // Each entry weighs its 1,000 body bytes plus a little: at most 100 fit in 100,000 bytes.
    assertThat(cache.estimatedSize()).isBetween(1L, 100L);
  }

  @Test
  void eachEntryLivesAsLongAsItsHookSays() {
    EtagCache cache = new EtagCache(1 << 20, clock);
    cache.put(key(1), "\"a\"", json("{}"), 10, Duration.ofSeconds(10));
    cache.put(key(2), "\"b\"", json("{}"), 10, Duration.ofSeconds(60));
    cache.put(key(3), "\"c\"", json("{}"), 10, null);

    clock.advance(Duration.ofSeconds(11));

    assertThat(cache.get(key(1))).isNull();
    assertThat(cache.get(key(2))).isNotNull();
    assertThat(cache.get(key(3))).isNotNull();
    clock.advance(Duration.ofSeconds(50));
    assertThat(cache.get(key(2))).isNull();
    assertThat(cache.get(key(3))).isNotNull();
  }
}
