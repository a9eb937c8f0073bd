package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ResourceVersions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The owned objects a controller created that its informer caches do not show yet. A sync reads the objects a parent
 * owns from the caches; the next sync of the parent can run before the cache of an owned type has what the last one
 * created (the parent's own status change arrived first, on another watch) and would create it again — refused with
 * {@code AlreadyExists}, a request for nothing — and show the hook a parent without it. This remembers each create of
 * one sync key until the cache shows the object, and adds it to what the cache shows meanwhile
 * ({@link #observedWith}).
 *
 * <p>Thread-safe. Bounded: a sync key's creates are forgotten {@value #KEEP_SECONDS} s after its last one, whatever
 * the caches show by then, and at most {@value #MAX_KEYS} keys are kept.
 */
public final class WrittenChildren {

  private static final int MAX_KEYS = 100_000;
  private static final int KEEP_SECONDS = 10;

  /** One owned object: its resource, namespace and name. */
  private record Owned(ApiResource resource, String namespace, String name) {}

  /** The sync key and the UID of the object synced (a namesake object must not see another's creates). */
  private record Scope(Object key, String uid) {}

  private final Cache<Scope, Map<Owned, KubeObject>> created = Caches.newBuilder().maximumSize(MAX_KEYS)
      .expireAfterWrite(Duration.ofSeconds(KEEP_SECONDS)).build();

  /** Where one sync records what it created, and what it wrote (for the {@link HotLoopGuard}). */
  @FunctionalInterface
  public interface Recorder {

    /** Records nothing. */
    Recorder NONE = (resource, object) -> { };

    /** {@code object}, as the API server answered its create, of {@code resource}. */
    void created(ApiResource resource, KubeObject object);

    /** A write the API server accepted: a create, an update or a delete of an owned object. */
    default void wrote(HotLoopGuard.Write write) { }
  }

  /** The recorder of the sync of {@code key} about the object with UID {@code uid}. */
  public Recorder recorder(Object key, String uid) {
    Scope scope = new Scope(key, uid);
    return (resource, object) -> created.asMap().compute(scope, (s, known) -> {
      Map<Owned, KubeObject> all = known == null ? new ConcurrentHashMap<>() : known;
      all.put(new Owned(resource, object.namespace(), object.name()), object);
      return all;
    });
  }

  /** Whether the cache of {@code type} has caught up to the resourceVersion {@code created} was created at. */
  private static boolean caughtUp(ChildType type, KubeObject created) {
    String seen = type.informer().resourceVersion();
    String version = created.resourceVersion();
    return seen != null && version != null && !ResourceVersions.newer(version, seen);
  }

  /**
   * {@code observed}, the owned objects of the sync of {@code key} as the caches show them, with what the syncs before
   * it created that the caches do not show yet. A create the cache shows (by namespace and name) is forgotten, and so
   * is one the cache has caught up with but does not show (deleted since: created again if still desired).
   */
  public Map<ChildType, List<KubeObject>> observedWith(Object key, String uid,
      Map<ChildType, List<KubeObject>> observed) {
    Map<Owned, KubeObject> known = created.getIfPresent(new Scope(key, uid));
    if (known == null || known.isEmpty()) {
      return observed;
    }
    Map<ChildType, List<KubeObject>> result = new LinkedHashMap<>();
    observed.forEach((type, objects) -> {
      List<KubeObject> list = objects;
      for (Iterator<Map.Entry<Owned, KubeObject>> it = known.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<Owned, KubeObject> entry = it.next();
        Owned owned = entry.getKey();
        if (!owned.resource().equals(type.resource())) {
          continue;
        }
        if (objects.stream().anyMatch(object -> object.name().equals(owned.name())
            && object.namespace().equals(owned.namespace()))) {
          it.remove(); // the cache has it now
        } else if (caughtUp(type, entry.getValue())) {
          it.remove(); // the cache has seen its create and does not show it: deleted since
        } else {
          if (list == objects) {
            list = new ArrayList<>(objects);
          }
          list.add(entry.getValue());
        }
      }
      result.put(type, list);
    });
    return result;
  }
}
