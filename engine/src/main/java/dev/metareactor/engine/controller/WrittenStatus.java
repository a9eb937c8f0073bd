package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.apply.GoJson;
import dev.metareactor.apply.JsonEquality;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.ObjectVersion;
import dev.metareactor.engine.kube.ResourceVersions;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The statuses a controller wrote that its informer cache may not show yet: {@link StatusWriter}'s memory. A status is
 * written without reading the object first, compared with the cached copy; but the sync after a write (often the echo
 * of the writes that sync made to the object's children) can run before the cache has the written status, and would
 * write the same status again. This remembers, per object, the status written and the resourceVersion the write gave
 * the object: while the cache shows an older version (the one the status was written over, or one in between, such
 * as a DecoratorController's labels written just before), the same status is not written again. As soon as the cache
 * shows the written version or a newer one (the write itself, or anybody's change after it), the cached copy decides
 * again, so a status someone else changed meanwhile is still put back. When the write's version is unknown, only the
 * version the status was written over counts as not showing it.
 *
 * <p>A status is kept as its text the way Go's {@code encoding/json} writes it (keys sorted), not as a tree: about
 * a fifth of the memory (a tree of a few fields took some 750 bytes; every parent of a wave has one for a minute), and
 * comparing a status with it allocates nothing ({@link GoJson#marshalsTo}). The same status in another key order is
 * the same text; one that differs only in how it spells a number ({@code 1} and {@code 1.0}) or in a member set to
 * {@code null} is not, and is written again, as without this memory.
 *
 * <p>Thread-safe; bounded (entries expire a minute after the write, and at most {@value #MAX_OBJECTS} are kept).
 */
final class WrittenStatus {

  private static final int MAX_OBJECTS = 100_000;
  private static final Duration KEEP = Duration.ofMinutes(1);

  /**
   * A status written over the object at {@code over}, which gave it {@code version} ({@code null}: unknown); the
   * status as {@link GoJson#marshal} writes it.
   */
  private record Written(@Nullable String over, @Nullable String version, String status) {

    /** Whether the object at {@code resourceVersion} cannot show this write yet. */
    boolean notShownAt(@Nullable String resourceVersion) {
      return Objects.equals(over, resourceVersion)
          || version != null && resourceVersion != null && ResourceVersions.newer(version, resourceVersion);
    }
  }

  private final Cache<String, Written> written =
      Caches.newBuilder().maximumSize(MAX_OBJECTS).expireAfterWrite(KEEP).build();

  /**
   * Whether {@code status} needs writing over {@code cached}, the object as the informer has it (whose status is
   * {@code cachedStatus}).
   */
  boolean needsWriting(KubeObject cached, @Nullable JsonNode cachedStatus, JsonNode status) {
    if (JsonEquality.equal(status, cachedStatus)) {
      return false;
    }
    Written last = written.getIfPresent(cached.storedUid());
    return last == null || !last.notShownAt(cached.resourceVersion()) || !GoJson.marshalsTo(status, last.status());
  }

  /** {@code status} was written over {@code cached}, and the API server answered {@code answer}. */
  void wrote(KubeObject cached, ObjectApi.Written answer, JsonNode status) {
    ObjectVersion version = answer.version();
    written.put(cached.storedUid(),
        new Written(cached.resourceVersion(), version == null ? null : version.resourceVersion(),
            GoJson.marshal(status)));
  }
}
