package dev.metareactor.engine.shard;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import org.jspecify.annotations.Nullable;

/**
 * Rendezvous (highest random weight) hashing: an object belongs to the shard whose weight for the object's key is
 * highest. Every replica computes the same owner from the same membership without talking to the others, and a
 * membership change moves only what it must: a shard added to N takes about 1/(N+1) of the objects, each from the
 * shard that had it, and a shard removed gives away only its own.
 *
 * <p>The weight is a 64-bit FNV-1a hash of {@code shard + "\0" + key}, finished with MurmurHash3's 64-bit mixer so
 * that keys differing in one character spread evenly. Stateless and thread-safe.
 */
public final class Rendezvous {

  private Rendezvous() {}

  /** The shard among {@code shards} that owns {@code key}, or {@code null} when there is none. */
  public static @Nullable String owner(String key, Collection<String> shards) {
    String best = null;
    long bestWeight = 0;
    for (String shard : shards) {
      long weight = weight(shard, key);
      // Ties (practically impossible) go to the smaller name, so that every replica picks the same.
      if (best == null || Long.compareUnsigned(weight, bestWeight) > 0
          || weight == bestWeight && shard.compareTo(best) < 0) {
        best = shard;
        bestWeight = weight;
      }
    }
    return best;
  }

  /** The weight of {@code shard} for {@code key}. */
  static long weight(String shard, String key) {
    long hash = 0xcbf29ce484222325L;
    hash = fnv(hash, shard);
    hash ^= 0;
    hash *= 0x100000001b3L;
    hash = fnv(hash, key);
    return mix(hash);
  }

  private static long fnv(long hash, String text) {
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      hash ^= b & 0xff;
      hash *= 0x100000001b3L;
    }
    return hash;
  }

  private static long mix(long hash) {
    hash ^= hash >>> 33;
    hash *= 0xff51afd7ed558ccdL;
    hash ^= hash >>> 33;
    hash *= 0xc4ceb9fe1a85ec53L;
    hash ^= hash >>> 33;
    return hash;
  }
}
