package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.LabelSelector;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * One user's hold on a shared informer: read its cache, subscribe to its events, and {@link #close()} to give the
 * informer back (the last holder's close stops it). Reads are served from memory and never call the API server.
 */
public interface InformerLease extends AutoCloseable {

  ApiResource resource();

  /** Whether the initial list has been received. */
  boolean hasSynced();

  /**
   * The resourceVersion the cache has caught up to: that of the last list, watch event or bookmark it received
   * ({@code null} before the first list). Every change the server made to the watched objects at or before it is in
   * the cache (a watch delivers them in order).
   */
  @Nullable String resourceVersion();

  /** The cached object, if any. {@code namespace} is ignored for cluster-scoped resources. */
  Optional<KubeObject> get(String namespace, String name);

  /** Cached objects whose controller has this UID (in any namespace). */
  List<KubeObject> controlledBy(String controllerUid);

  /** Cached objects without a controller in {@code namespace} ({@code ""} for cluster-scoped ones). */
  List<KubeObject> orphans(String namespace);

  /** Cached objects that carry the label {@code key=value}, in every namespace. */
  List<KubeObject> labelled(String key, String value);

  /**
   * The cached objects a selector may match, without a scan when it requires a label: the smallest bucket of its
   * required labels, else the objects of {@code namespace} (every object for {@code ""}). Callers still test the
   * whole selector (and the namespace) on each.
   */
  default List<KubeObject> candidates(LabelSelector selector, String namespace) {
    return selector.requiredLabels().entrySet().stream()
        .map(label -> labelled(label.getKey(), label.getValue()))
        .min(Comparator.comparingInt(List::size))
        .orElseGet(() -> namespace.isEmpty() ? list() : inNamespace(namespace));
  }

  /** Every cached object. */
  List<KubeObject> list();

  /** The cached objects of one namespace (from the informer's namespace index). */
  List<KubeObject> inNamespace(String namespace);

  /**
   * Changes from now on, preceded by an {@code ADDED} event for each object already cached. Each subscription
   * registers its own handler; cancelling removes it. Handlers run on the informer's thread and must not block:
   * route and enqueue only.
   */
  Flux<ObjectEvent> events();

  /** Gives the informer back. Idempotent. */
  @Override
  void close();
}
