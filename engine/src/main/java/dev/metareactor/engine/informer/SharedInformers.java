package dev.metareactor.engine.informer;

import dev.metareactor.engine.discovery.ApiResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One informer per resource for the whole process, shared by every hosted controller that needs it and
 * reference-counted: {@link #acquire} starts it on first use, the last {@link InformerLease#close()} stops it.
 * {@link #acquireOne} does the same for a single named object (a Secret a webhook's credentials come from): a
 * watch with a field selector, so the engine never caches every Secret of the cluster to follow one.
 *
 * <p>Every informer watches all namespaces, replays its cache to its handlers every {@code resync} (the
 * {@code --cache-flush-interval}), and keeps the {@link InformerIndexes}. A failing list or watch (a resource
 * that went away, missing RBAC) is logged and retried by the informer; it never throws into the caller.
 */
public final class SharedInformers implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SharedInformers.class);

  private final KubernetesClient client;
  private final Duration resync;
  private final Map<Target, Shared> informers = new HashMap<>();

  /** What one informer watches: a whole resource ({@code name == null}) or one object of it. */
  private record Target(ApiResource resource, String namespace, String name) {
    @Override
    public String toString() {
      return name == null ? resource.toString() : resource + " " + (namespace.isEmpty() ? "" : namespace + "/") + name;
    }
  }

  public SharedInformers(KubernetesClient client, Duration resync) {
    this.client = Objects.requireNonNull(client, "client");
    this.resync = Objects.requireNonNull(resync, "resync");
  }

  /** A lease on the informer of {@code resource}, starting it if nobody holds one yet. */
  public synchronized InformerLease acquire(ApiResource resource) {
    Objects.requireNonNull(resource, "resource");
    return lease(new Target(resource, "", null));
  }

  /**
   * A lease on an informer of the one object {@code namespace/name} of {@code resource} (it need not exist yet),
   * starting it if nobody holds one yet. Only {@link InformerLease#get}, {@link InformerLease#events} and
   * {@link InformerLease#hasSynced} apply to it: it keeps none of the owner and orphan indexes.
   */
  public synchronized InformerLease acquireOne(ApiResource resource, String namespace, String name) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    return lease(new Target(resource, resource.namespaced() ? namespace : "", name));
  }

  private Lease lease(Target target) {
    Shared shared = informers.computeIfAbsent(target, this::start);
    shared.holders++;
    return new Lease(shared);
  }

  /** How many informers run now (for tests and metrics). */
  public synchronized int running() {
    return informers.size();
  }

  private Shared start(Target target) {
    var resources = client.genericKubernetesResources(target.resource().context());
    SharedIndexInformer<GenericKubernetesResource> informer;
    if (target.name() == null) {
      informer = resources.inAnyNamespace().runnableInformer(resync.toMillis());
      informer.addIndexers(InformerIndexes.all());
    } else {
      informer = (target.resource().namespaced() ? resources.inNamespace(target.namespace()) : resources)
          .withName(target.name()).runnableInformer(resync.toMillis());
    }
    informer.exceptionHandler((started, failure) -> {
      LOG.warn("informer for {} failed, retrying: {}", target, failure.getMessage());
      return true;
    });
    informer.start();
    LOG.debug("started informer for {}", target);
    return new Shared(target, informer);
  }

  private synchronized void release(Shared shared) {
    if (--shared.holders == 0) {
      informers.remove(shared.target);
      shared.informer.stop();
      LOG.debug("stopped informer for {}", shared.target);
    }
  }

  @Override
  public synchronized void close() {
    informers.values().forEach(shared -> shared.informer.stop());
    informers.clear();
  }

  private static final class Shared {
    final Target target;
    final ApiResource resource;
    final SharedIndexInformer<GenericKubernetesResource> informer;
    int holders;

    Shared(Target target, SharedIndexInformer<GenericKubernetesResource> informer) {
      this.target = target;
      this.resource = target.resource();
      this.informer = informer;
    }
  }

  private final class Lease implements InformerLease {
    private final Shared shared;
    private final AtomicBoolean closed = new AtomicBoolean();

    Lease(Shared shared) {
      this.shared = shared;
    }

    @Override
    public ApiResource resource() {
      return shared.resource;
    }

    @Override
    public boolean hasSynced() {
      return shared.informer.hasSynced();
    }

    @Override
    public Optional<GenericKubernetesResource> get(String namespace, String name) {
      String key = shared.resource.namespaced() ? Cache.namespaceKeyFunc(namespace, name) : name;
      return Optional.ofNullable(shared.informer.getStore().getByKey(key));
    }

    @Override
    public List<GenericKubernetesResource> controlledBy(String controllerUid) {
      return shared.informer.getIndexer().byIndex(InformerIndexes.CONTROLLER_UID, controllerUid);
    }

    @Override
    public List<GenericKubernetesResource> orphans(String namespace) {
      return shared.informer.getIndexer().byIndex(InformerIndexes.ORPHANS_BY_NAMESPACE, namespace);
    }

    @Override
    public List<GenericKubernetesResource> labelled(String key, String value) {
      return shared.informer.getIndexer().byIndex(InformerIndexes.BY_LABEL, InformerIndexes.labelKey(key, value));
    }

    @Override
    public List<GenericKubernetesResource> inNamespace(String namespace) {
      return shared.informer.getIndexer().byIndex(Cache.NAMESPACE_INDEX, namespace);
    }

    @Override
    public List<GenericKubernetesResource> list() {
      return shared.informer.getStore().list();
    }

    @Override
    public Flux<ObjectEvent> events() {
      return Flux.create(sink -> {
        ResourceEventHandler<GenericKubernetesResource> handler = new ResourceEventHandler<>() {
          @Override
          public void onAdd(GenericKubernetesResource object) {
            sink.next(new ObjectEvent(ObjectEvent.Type.ADDED, null, object));
          }

          @Override
          public void onUpdate(GenericKubernetesResource previous, GenericKubernetesResource object) {
            sink.next(new ObjectEvent(ObjectEvent.Type.UPDATED, previous, object));
          }

          @Override
          public void onDelete(GenericKubernetesResource object, boolean finalStateUnknown) {
            sink.next(new ObjectEvent(ObjectEvent.Type.DELETED, null, object));
          }
        };
        shared.informer.addEventHandler(handler);
        sink.onDispose(() -> shared.informer.removeEventHandler(handler));
      }, FluxSink.OverflowStrategy.BUFFER);
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        release(shared);
      }
    }
  }
}
