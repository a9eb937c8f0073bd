package dev.metareactor.engine.controller.rolling;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.config.Caches;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The ControllerRevisions a controller wrote that its informer cache may not show yet. The sync right after a
 * revision write (often the echo of the child it moved) can run before the cache has the write; on the stale
 * revision it would hand the moved child back to its older revision and write that revision's state over it. So
 * until the cache shows a write, the revision as written stands in for the copy it replaced.
 *
 * <p>Each write remembers the versions of the revision it supersedes (its resourceVersion as the sync saw it, or
 * "absent" for a create, plus what an earlier pending write superseded). While the cache shows one of those, the
 * written revision (or, for a delete, none) is believed; once the cache shows the write itself, or any other
 * version (somebody else's change), the cache decides again. Thread-safe; bounded (entries expire a minute after
 * the last write of a parent's revisions, and at most {@value #MAX_PARENTS} parents are kept).
 */
final class WrittenRevisions {

  private static final int MAX_PARENTS = 100_000;
  private static final Duration KEEP = Duration.ofMinutes(1);
  /** The version of a revision that does not exist. */
  private static final String ABSENT = "";

  /** A write that superseded {@code staleVersions}; {@code revision} is {@code null} for a delete. */
  private record Written(Set<String> staleVersions, @Nullable RevisionObject revision) {}

  /** Parent UID to revision name to the pending write of that revision. */
  private final Cache<String, Map<String, Written>> written =
      Caches.newBuilder().maximumSize(MAX_PARENTS).expireAfterWrite(KEEP).build();

  /**
   * The revisions of the parent with {@code parentUid} to believe: {@code cached}, each pending write in place of
   * the copy it superseded, in the cached order (created revisions the cache does not show yet at the end).
   */
  List<RevisionObject> current(String parentUid, List<RevisionObject> cached) {
    Map<String, Written> pending = written.getIfPresent(parentUid);
    if (pending == null || pending.isEmpty()) {
      return cached;
    }
    Map<String, RevisionObject> byName = new LinkedHashMap<>();
    cached.forEach(revision -> byName.put(revision.name(), revision));
    for (Map.Entry<String, Written> entry : Map.copyOf(pending).entrySet()) {
      String name = entry.getKey();
      Written write = entry.getValue();
      String shown = versionOf(byName.get(name));
      if (!write.staleVersions().contains(shown)) {
        pending.remove(name, write); // the cache shows the write, or a newer change: it decides again
        continue;
      }
      RevisionObject revision = write.revision();
      if (revision == null) {
        byName.remove(name);
      } else {
        byName.put(name, revision);
      }
    }
    return List.copyOf(byName.values());
  }

  /**
   * The revision {@code name} of the parent with {@code parentUid}, believed to be {@code before} (or absent), was
   * written as {@code after} ({@code null}: deleted).
   */
  void wrote(String parentUid, String name, @Nullable RevisionObject before, @Nullable RevisionObject after) {
    Map<String, Written> pending = Objects.requireNonNull(
        written.get(parentUid, uid -> new ConcurrentHashMap<>()), "made when absent");
    Written earlier = pending.get(name);
    Set<String> stale = new HashSet<>();
    if (earlier != null && Objects.equals(versionOf(earlier.revision()), versionOf(before))) {
      stale.addAll(earlier.staleVersions()); // the write replaced one the cache does not show yet either
    }
    stale.add(versionOf(before));
    pending.put(name, new Written(Set.copyOf(stale), after));
    written.put(parentUid, pending); // restarts the expiry
  }

  private static String versionOf(@Nullable RevisionObject revision) {
    if (revision == null) {
      return ABSENT;
    }
    return Objects.requireNonNullElse(revision.resourceVersion(), ABSENT);
  }
}
