package dev.metareactor.engine.controller.apply;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.apply.GoJson;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ResourceVersions;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.node.ObjectNode;

/**
 * An applier's verdicts "nothing to do", remembered per child with the child's resourceVersion and a fingerprint of
 * what made the verdict (the desired object, its owner and the engine's labels: {@link #fingerprint}), so that the
 * resyncs of a converged child cost a serialization of the desired object into a reused buffer ({@link
 * GoJson#fingerprint}, no allocation) and a lookup, not a parse of the cached child and a merge. A verdict is a
 * function of those inputs and the object at that resourceVersion alone; a child or a desired object that changed
 * is judged again. One forgotten is judged again too, nothing worse.
 */
final class SettledChildren {

  /**
   * Children whose verdict is remembered (about 200 bytes each). An entry goes an hour after its child was last
   * synced (a deleted child is never synced again).
   */
  private static final int MAX = 200_000;

  /** Child UID -> the desired state (by fingerprint) last seen to need nothing at that resourceVersion. */
  private final Cache<String, Settled> settled = Caches.newBuilder().maximumSize(MAX)
      .expireAfterAccess(Duration.ofHours(1)).build();

  /**
   * A verdict: the desired state's fingerprint and the child's resourceVersion, as an integer when it is etcd's
   * ({@link ResourceVersions#canonicalInteger}; then {@code otherVersion} is {@code null}), so the entry keeps no
   * String that the cache has since let go of (a child changed after its verdict), or as it is otherwise.
   */
  private record Settled(long desired, long version, @Nullable String otherVersion) {

    static Settled of(long desired, String resourceVersion) {
      long version = ResourceVersions.canonicalInteger(resourceVersion);
      return new Settled(desired, version, version < 0 ? resourceVersion : null);
    }

    boolean at(String resourceVersion) {
      return otherVersion == null ? version == ResourceVersions.canonicalInteger(resourceVersion)
          : otherVersion.equals(resourceVersion);
    }
  }

  /** Whether {@code current} was seen to need nothing for the desired state of {@code fingerprint}. */
  boolean isSettled(KubeObject current, long fingerprint) {
    Settled known = settled.getIfPresent(current.storedUid());
    String version = current.resourceVersion();
    return known != null && version != null && known.desired() == fingerprint && known.at(version);
  }

  /** Remembers that {@code object}, as it is now, needs nothing for the desired state of {@code fingerprint}. */
  void settle(KubeObject object, long fingerprint) {
    String version = object.resourceVersion();
    if (version != null) {
      settled.put(object.storedUid(), Settled.of(fingerprint, version));
    }
  }

  /**
   * The desired object and its owner, which make the configuration (a child of another owner of the same name is
   * another configuration: its ControllerRef), and the labels the engine writes on every child.
   */
  static long fingerprint(KubeObject owner, ObjectNode desired, Map<String, String> ownLabels) {
    return (GoJson.fingerprint(desired) * 31 + owner.storedUid().hashCode()) * 31 + ownLabels.hashCode();
  }
}
