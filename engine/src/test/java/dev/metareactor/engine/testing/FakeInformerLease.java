package dev.metareactor.engine.testing;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * An informer cache in memory for unit tests: a test puts the objects it wants cached; reads answer from them as an
 * informer's would (by namespace, owner, label). {@link #events()} follows the informer's contract: an {@code ADDED}
 * event for each cached object, then what a test {@link #deliver delivers}.
 */
public final class FakeInformerLease implements InformerLease {

  private final ApiResource resource;
  private final Map<String, KubeObject> objects = new ConcurrentHashMap<>();
  private final Sinks.Many<ObjectEvent> events = Sinks.many().multicast().directBestEffort();
  private volatile @Nullable String resourceVersion;
  private volatile boolean synced = true;
  private final AtomicInteger syncedAsked = new AtomicInteger();

  public FakeInformerLease(ApiResource resource) {
    this.resource = Objects.requireNonNull(resource, "resource");
  }

  /** Caches {@code object} (replacing one of the same namespace and name). */
  public FakeInformerLease put(KubeObject object) {
    objects.put(keyOf(object), object);
    return this;
  }

  /**
   * Applies {@code event} to the cache and then hands it to the current {@link #events()} subscribers, in that order
   * as an informer does (a handler reading the cache sees the event's state). Call it from one thread at a time.
   */
  public synchronized void deliver(ObjectEvent event) {
    resourceVersion = event.object().resourceVersion();
    if (event.type() == ObjectEvent.Type.DELETED) {
      objects.remove(keyOf(event.object()));
    } else {
      put(event.object());
    }
    events.emitNext(event, Sinks.EmitFailureHandler.FAIL_FAST);
  }

  private String keyOf(KubeObject object) {
    return KubeObject.namespacedName(resource.namespaced() ? object.namespace() : "", object.name());
  }

  @Override
  public ApiResource resource() {
    return resource;
  }

  @Override
  public boolean hasSynced() {
    syncedAsked.incrementAndGet();
    return synced;
  }

  /** Whether the cache has synced from now on (it has, unless a test says otherwise). */
  public FakeInformerLease synced(boolean synced) {
    this.synced = synced;
    return this;
  }

  /** How many times {@link #hasSynced} was asked. */
  public int syncedAsked() {
    return syncedAsked.get();
  }

  /**
   * The resourceVersion of the last event {@linkplain #deliver delivered}, or the one a test {@linkplain #caughtUpTo
   * set}; {@code null} before either.
   */
  @Override
  public @Nullable String resourceVersion() {
    return resourceVersion;
  }

  /** The cache has caught up to {@code version} (a bookmark, or the list a test's objects came with). */
  public FakeInformerLease caughtUpTo(String version) {
    resourceVersion = version;
    return this;
  }

  @Override
  public Optional<KubeObject> get(String namespace, String name) {
    return Optional.ofNullable(objects.get(KubeObject.namespacedName(resource.namespaced() ? namespace : "", name)));
  }

  @Override
  public List<KubeObject> controlledBy(String controllerUid) {
    return objects.values().stream().filter(object -> {
      OwnerRef controller = object.controller();
      return controller != null && controllerUid.equals(controller.uid());
    }).toList();
  }

  @Override
  public List<KubeObject> orphans(String namespace) {
    return inNamespace(namespace).stream().filter(object -> object.controller() == null).toList();
  }

  @Override
  public List<KubeObject> labelled(String key, String value) {
    return objects.values().stream().filter(object -> value.equals(object.labels().get(key))).toList();
  }

  @Override
  public List<KubeObject> list() {
    return List.copyOf(objects.values());
  }

  @Override
  public List<KubeObject> inNamespace(String namespace) {
    return objects.values().stream().filter(object -> object.namespace().equals(namespace)).toList();
  }

  @Override
  public Flux<ObjectEvent> events() {
    return Flux.create(subscriber -> {
      synchronized (this) { // no delivery between the replay of the cache and following what comes next
        list().forEach(object -> subscriber.next(new ObjectEvent(ObjectEvent.Type.ADDED, null, object)));
        subscriber.onDispose(events.asFlux().subscribe(subscriber::next));
      }
    });
  }

  @Override
  public void close() {}
}
