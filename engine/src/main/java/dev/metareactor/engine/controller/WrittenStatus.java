package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.metareactor.apply.JsonEquality;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The statuses a controller wrote that its informer cache may not show yet: {@link StatusWriter}'s memory. A status is
 * written without reading the object first, compared with the cached copy; but the sync after a write (often the echo
 * of the writes that sync made to the object's children) can run before the cache has the written status, and would
 * write the same status again. This remembers, per object, the status written and the resourceVersion the cache
 * showed when it was written: while the cache still shows that resourceVersion, the same status is not written again.
 * As soon as the cache shows any newer version of the object (the write itself, or anybody's change), the cached copy
 * decides again, so a status someone else changed meanwhile is still put back.
 *
 * <p>Thread-safe; bounded (entries expire a minute after the write, and at most {@value #MAX_OBJECTS} are kept).
 */
final class WrittenStatus {

  private static final int MAX_OBJECTS = 100_000;
  private static final Duration KEEP = Duration.ofMinutes(1);

  /** A status written over the object at {@code resourceVersion}. */
  private record Written(@Nullable String resourceVersion, JsonNode status) {}

  private final Cache<String, Written> written =
      Caffeine.newBuilder().maximumSize(MAX_OBJECTS).expireAfterWrite(KEEP).build();

  /**
   * Whether {@code status} needs writing over {@code cached}, the object as the informer has it (whose status is
   * {@code cachedStatus}).
   */
  boolean needsWriting(KubeObject cached, @Nullable JsonNode cachedStatus, JsonNode status) {
    if (JsonEquality.equal(status, cachedStatus)) {
      return false;
    }
    Written last = written.getIfPresent(cached.storedUid());
    return last == null || !Objects.equals(last.resourceVersion(), cached.resourceVersion())
        || !JsonEquality.equal(status, last.status());
  }

  /** {@code status} was written over {@code cached}. */
  void wrote(KubeObject cached, JsonNode status) {
    written.put(cached.storedUid(), new Written(cached.resourceVersion(), status));
  }
}
