package dev.metareactor.engine.testing;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.Informers;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * In-memory informers for unit tests: one {@link FakeInformerLease} per resource, created on first use, so a test
 * can put objects into (and deliver events from) the very cache a controller acquires. A lease on one namespace's
 * informer reads and follows only that namespace of it, as the real one would; {@link #held()} says which informers
 * are held now, and how many times.
 */
public final class FakeInformers implements Informers {

  private final Map<ApiResource, FakeInformerLease> leases = new ConcurrentHashMap<>();
  private final Map<String, Integer> held = new ConcurrentHashMap<>();

  /** The cache of {@code resource}: the one {@link #acquire} hands out. */
  public FakeInformerLease of(ApiResource resource) {
    return leases.computeIfAbsent(resource, FakeInformerLease::new);
  }

  /**
   * The informers held now, each with how many leases: {@code <resource>} for every namespace,
   * {@code <resource> in <namespace>} for one, and the label selector in parentheses when there is one.
   */
  public Map<String, Integer> held() {
    return new TreeMap<>(held);
  }

  @Override
  public InformerLease acquire(ApiResource resource) {
    return hold(resource.toString(), of(resource), object -> true);
  }

  /**
   * The resource's cache, of one namespace when {@code namespace} is one; the label selector is not applied (unit
   * tests put only the objects it would select).
   */
  @Override
  public InformerLease acquire(ApiResource resource, String namespace, String labelSelector) {
    boolean oneNamespace = resource.namespaced() && !namespace.isEmpty();
    String what = (oneNamespace ? resource + " in " + namespace : resource.toString())
        + (labelSelector.isEmpty() ? "" : " (" + labelSelector + ")");
    return hold(what, of(resource), object -> !oneNamespace || object.namespace().equals(namespace));
  }

  @Override
  public InformerLease acquireMetadata(ApiResource resource) {
    return of(resource);
  }

  @Override
  public InformerLease acquireMetadata(ApiResource resource, String labelSelector) {
    return of(resource);
  }

  /** The whole resource's cache: a controller reading one object of it only asks for that one. */
  @Override
  public InformerLease acquireOne(ApiResource resource, String namespace, String name) {
    return of(resource);
  }

  private InformerLease hold(String what, FakeInformerLease cache, Predicate<KubeObject> within) {
    held.merge(what, 1, Integer::sum);
    return new Held(what, cache, within);
  }

  /** A lease on (part of) a cache, counted in {@link #held} until closed. */
  private final class Held implements InformerLease {
    private final String what;
    private final FakeInformerLease cache;
    private final Predicate<KubeObject> within;
    private final AtomicBoolean closed = new AtomicBoolean();

    Held(String what, FakeInformerLease cache, Predicate<KubeObject> within) {
      this.what = what;
      this.cache = cache;
      this.within = within;
    }

    @Override
    public ApiResource resource() {
      return cache.resource();
    }

    @Override
    public boolean hasSynced() {
      return cache.hasSynced();
    }

    @Override
    public @Nullable String resourceVersion() {
      return cache.resourceVersion();
    }

    @Override
    public Optional<KubeObject> get(String namespace, String name) {
      return cache.get(namespace, name).filter(within);
    }

    @Override
    public List<KubeObject> controlledBy(String controllerUid) {
      return cache.controlledBy(controllerUid).stream().filter(within).toList();
    }

    @Override
    public List<KubeObject> orphans(String namespace) {
      return cache.orphans(namespace).stream().filter(within).toList();
    }

    @Override
    public List<KubeObject> labelled(String key, String value) {
      return cache.labelled(key, value).stream().filter(within).toList();
    }

    @Override
    public List<KubeObject> list() {
      return cache.list().stream().filter(within).toList();
    }

    @Override
    public List<KubeObject> inNamespace(String namespace) {
      return cache.inNamespace(namespace).stream().filter(within).toList();
    }

    @Override
    public Flux<ObjectEvent> events() {
      return cache.events().filter(event -> within.test(event.object()));
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        held.computeIfPresent(what, (key, count) -> count == 1 ? null : count - 1);
      }
    }
  }
}
