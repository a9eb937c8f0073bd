package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.AroundWritesApi;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.ObjectVersion;
import dev.metareactor.engine.kube.ResourceVersions;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * The writes one controller made whose informer events have not come back yet: each written object's UID with the
 * resourceVersion its write gave it. A sync's writes (children created and updated, the parent's status) come back
 * as informer events moments later; such an event is the controller's own write coming back, not a change, and
 * {@link #mark} says so ({@link ObjectEvent#ownWrite()}), so that the routers give it the cause
 * {@link dev.metareactor.engine.queue.Trigger.Cause#ECHO}: the work queue lets the echoes of one sync's writes come
 * back before the key's next run and makes that one run, instead of one per echo (see
 * {@link dev.metareactor.engine.queue.KeyedWorkQueue}, "Echoes").
 *
 * <p>An event is an echo when it shows exactly the version written; a later version is someone else's change (or
 * the next write of the engine's), and it ends what is remembered of the object either way. An event that arrives
 * before its write's answer is a change as before: nothing is lost, the key merely runs once more.
 *
 * <p>Thread-safe. Bounded: an object is forgotten at its next event, at its deletion, a minute after its write
 * whatever comes (a write to an object this controller does not watch), and beyond {@value #MAX_OBJECTS} objects.
 */
final class OwnWrites {

  private static final int MAX_OBJECTS = 100_000;
  private static final Duration KEEP = Duration.ofMinutes(1);

  /** The resourceVersion of each object's last write, by the object's UID. */
  private final Cache<String, String> written =
      Caffeine.newBuilder().maximumSize(MAX_OBJECTS).expireAfterWrite(KEEP).build();

  /** {@code api}, remembering here the object and version of every write it makes (dry runs make none). */
  ObjectApi recording(ObjectApi api) {
    return new AroundWritesApi(api) {
      @Override
      protected <T> Mono<T> around(String verb, ApiResource resource, String namespace, String name, Mono<T> write) {
        return write.doOnNext(answer -> {
          if (answer instanceof ObjectApi.Written done) {
            wrote(done);
          }
        });
      }
    };
  }

  /** Remembers the object and version {@code answer} shows. */
  void wrote(ObjectApi.Written answer) {
    ObjectVersion version = answer.version();
    if (version != null) {
      // A slower answer of an earlier write must not replace a later one's version.
      written.asMap().merge(version.uid(), version.resourceVersion(),
          (known, now) -> ResourceVersions.newer(known, now) ? known : now);
    }
  }

  /**
   * {@code event}, marked as {@link ObjectEvent#ownWrite()} when it shows the version a write of this controller
   * made. Any event of a remembered object but an older one ends what is remembered of it.
   */
  ObjectEvent mark(ObjectEvent event) {
    String uid = event.object().uid();
    if (uid == null || uid.isEmpty()) {
      return event;
    }
    String version = written.getIfPresent(uid);
    if (version == null) {
      return event;
    }
    String seen = event.object().resourceVersion();
    if (event.type() == ObjectEvent.Type.DELETED) {
      written.invalidate(uid);
      return event;
    }
    if (seen == null || ResourceVersions.newer(version, seen)) {
      return event; // a version from before the write: the write's own event is still to come
    }
    written.asMap().remove(uid, version);
    return version.equals(seen) && !event.isResync() ? event.asOwnWrite() : event;
  }
}
