package dev.metareactor.engine.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.benmanes.caffeine.cache.Cache;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CachesTest {

  /**
   * An eviction, and the removal it reports, happen on the thread that wrote: with Caffeine's default they ran on a
   * {@code ForkJoinPool} thread, woken for it.
   */
  @Test
  void aCacheKeepsItsBookkeepingOnTheThreadThatWrites() {
    List<Thread> removedOn = new ArrayList<>();
    Cache<String, String> cache = Caches.newBuilder().maximumSize(1)
        .removalListener((key, value, cause) -> removedOn.add(Thread.currentThread())).build();

    cache.put("a", "1");
    cache.put("b", "2");

    // No cleanUp(): the write itself evicted the first entry, here, before put returned.
    assertThat(cache.asMap()).hasSize(1);
    assertThat(removedOn).containsExactly(Thread.currentThread());
  }
}
