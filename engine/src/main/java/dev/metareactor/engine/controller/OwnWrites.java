package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.AroundWritesApi;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.ObjectVersion;
import dev.metareactor.engine.kube.ResourceVersions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The writes one controller made whose informer events have not come back yet: each written object's UID with the
 * resourceVersions its writes gave it. A sync's writes (children created and updated, the parent's status) come back
 * as informer events moments later; such an event is the controller's own write coming back, not a change, and
 * {@link #mark} says so ({@link ObjectEvent#ownWrite()}), so that the routers give it the cause
 * {@link dev.metareactor.engine.queue.Trigger.Cause#ECHO}: the work queue lets the echoes of one sync's writes come
 * back before the key's next run and makes that one run, instead of one per echo (see
 * {@link dev.metareactor.engine.queue.KeyedWorkQueue}, "Echoes").
 *
 * <p>One sync may write one object twice: a DecoratorController patches its target's labels, then its status. Both
 * versions are remembered: the first write's event can arrive after the second write's answer, and it is as much an
 * echo as the second's (remembering only the last version made it a change, and the target ran once more with a cache
 * that did not show its status yet).
 *
 * <p>An event is an echo when it shows exactly a version written; a version that is not one of them is someone else's
 * change. Either way the versions up to the one shown are forgotten: the watch delivers an object's versions in order,
 * so their events will not come any more.
 *
 * <p>The watch and the write's answer race: under load the event of a write often arrives before its answer, when
 * the version is not known yet (at 1,000 DecoratorController targets, 5% of the labels patches' events did, and each
 * cost its target a third sync: the event looked like a change of labels, ran the target again at once, before the
 * status written after the labels came back, whose echo then ran it a third time). So the events of an object with
 * a write in flight wait for its answer ({@link #route}): the write's round trip (with its wait for the client-side
 * rate limit, and any attempts a {@code Retry-After} asks for), after which each is told apart as above, in the order
 * it came. That delays no run of the key that wrote: an object is written by a run of the key it belongs to (a
 * parent's children and status, a target's attachments, labels and status), which cannot run again before that run,
 * and so that write, has ended. Another key the event concerns (the parents relating to the object) hears of it that
 * much later.
 *
 * <p>Thread-safe. Bounded: an object is forgotten once its last written version came back, at its deletion, a minute
 * after its last write whatever comes (a write to an object this controller does not watch), and beyond
 * {@value #MAX_OBJECTS} objects; of one object at most the last {@value Versions#MAX} versions written are kept. The
 * events held back are those of objects with a write in flight, each until its write ends (answered, failed, timed
 * out or cancelled).
 */
final class OwnWrites {

  private static final int MAX_OBJECTS = 100_000;
  private static final Duration KEEP = Duration.ofMinutes(1);

  /** The resourceVersions of each object's writes whose events have not come back, by the object's UID. */
  private final Cache<String, Versions> written =
      Caches.newBuilder().maximumSize(MAX_OBJECTS).expireAfterWrite(KEEP).build();

  /** The objects with writes in flight, and the events of each that wait for them. */
  private final Map<WrittenName, InFlight> inFlight = new ConcurrentHashMap<>();

  /**
   * {@code api}, remembering here the object and version of every write it makes (dry runs make none), and holding
   * back the events of an object while a write to it is in flight (deletions hold nothing back: they answer no
   * version).
   */
  ObjectApi recording(ObjectApi api) {
    return new AroundWritesApi(api) {
      @Override
      protected <T> Mono<T> around(String verb, ApiResource resource, String namespace, String name, Mono<T> write) {
        Mono<T> remembered = write.doOnNext(answer -> {
          if (answer instanceof ObjectApi.Written done) {
            wrote(done);
          }
        });
        if ("delete".equals(verb) || name.isEmpty()) {
          return remembered;
        }
        WrittenName written = new WrittenName(resource.group(), resource.kind(), namespace, name);
        return Mono.defer(() -> {
          writing(written);
          return remembered.doFinally(signal -> ended(written));
        });
      }
    };
  }

  /**
   * Passes {@code event} to {@code route} marked ({@link #mark}): at once, or, when a write to its object is in
   * flight, once that write has ended (on the thread that ends it), after the events of the object held back before
   * it.
   */
  void route(ObjectEvent event, Consumer<ObjectEvent> route) {
    if (!inFlight.isEmpty()) {
      KubeObject object = event.object();
      WrittenName name = new WrittenName(ApiResource.groupOf(object.apiVersion()), object.kind(),
          object.namespace(), object.name());
      boolean[] held = new boolean[1];
      inFlight.computeIfPresent(name, (key, writes) -> {
        writes.held.add(new Held(event, route));
        held[0] = true;
        return writes;
      });
      if (held[0]) {
        return;
      }
    }
    route.accept(mark(event));
  }

  private void writing(WrittenName name) {
    inFlight.compute(name, (key, writes) -> {
      InFlight now = writes == null ? new InFlight() : writes;
      now.writes++;
      return now;
    });
  }

  /**
   * A write to {@code name} ended: once it was the last in flight, the events held back go on, in order. They are
   * passed on inside the map's lock of the object, so that an event arriving meanwhile waits and comes after them.
   */
  private void ended(WrittenName name) {
    inFlight.computeIfPresent(name, (key, writes) -> {
      if (--writes.writes > 0) {
        return writes;
      }
      writes.held.forEach(held -> held.route().accept(mark(held.event())));
      return null;
    });
  }

  /** Remembers the object and version {@code answer} shows. */
  void wrote(ObjectApi.Written answer) {
    ObjectVersion version = answer.version();
    if (version != null) {
      written.asMap().merge(version.uid(), Versions.of(version.resourceVersion()),
          (known, one) -> known.with(version.resourceVersion()));
    }
  }

  /**
   * {@code event}, marked as {@link ObjectEvent#ownWrite()} when it shows a version a write of this controller made.
   * Any event of a remembered object ends what is remembered of it up to the version it shows.
   */
  ObjectEvent mark(ObjectEvent event) {
    String uid = event.object().uid();
    if (uid == null || uid.isEmpty()) {
      return event;
    }
    Versions known = written.getIfPresent(uid);
    if (known == null) {
      return event;
    }
    if (event.type() == ObjectEvent.Type.DELETED) {
      written.invalidate(uid);
      return event;
    }
    String seen = event.object().resourceVersion();
    if (seen == null) {
      return event;
    }
    written.asMap().computeIfPresent(uid, (key, now) -> now.after(seen));
    return known.holds(seen) && !event.isResync() ? event.asOwnWrite() : event;
  }

  /** The object a write names: its resource's group and kind, namespace and name. */
  private record WrittenName(String group, String kind, String namespace, String name) {}

  /** An event held back, and where it goes. */
  private record Held(ObjectEvent event, Consumer<ObjectEvent> route) {}

  /** The writes in flight to one object, and its events held back meanwhile (guarded by the map's lock). */
  private static final class InFlight {
    int writes;
    final List<Held> held = new ArrayList<>(2);
  }

  /**
   * The versions written to one object, oldest first, at most {@value #MAX}: a sync writes an object once or twice,
   * and a key's syncs run one at a time.
   */
  record Versions(List<String> versions) {

    static final int MAX = 4;

    static Versions of(String version) {
      return new Versions(List.of(version));
    }

    boolean holds(String version) {
      return versions.contains(version);
    }

    /** These and {@code version}, in order; the oldest dropped beyond {@value #MAX}. */
    Versions with(String version) {
      if (holds(version)) {
        return this;
      }
      List<String> all = new ArrayList<>(versions.size() + 1);
      int at = 0;
      while (at < versions.size() && !ResourceVersions.newer(versions.get(at), version)) {
        at++;
      }
      all.addAll(versions.subList(0, at));
      all.add(version);
      all.addAll(versions.subList(at, versions.size()));
      return new Versions(List.copyOf(all.subList(Math.max(0, all.size() - MAX), all.size())));
    }

    /** The versions newer than {@code seen}, whose events are still to come; {@code null} when none is. */
    @Nullable Versions after(String seen) {
      List<String> newer = versions.stream().filter(version -> ResourceVersions.newer(version, seen)).toList();
      return newer.isEmpty() ? null : new Versions(newer);
    }
  }
}
