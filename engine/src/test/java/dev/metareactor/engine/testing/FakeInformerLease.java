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
import reactor.core.publisher.Flux;

/**
 * An informer cache in memory for unit tests: a test puts the objects it wants cached; reads answer from them as an
 * informer's would (by namespace, owner, label); no events are delivered.
 */
public final class FakeInformerLease implements InformerLease {

  private final ApiResource resource;
  private final Map<String, KubeObject> objects = new ConcurrentHashMap<>();

  public FakeInformerLease(ApiResource resource) {
    this.resource = Objects.requireNonNull(resource, "resource");
  }

  /** Caches {@code object} (replacing one of the same namespace and name). */
  public FakeInformerLease put(KubeObject object) {
    objects.put(KubeObject.namespacedName(resource.namespaced() ? object.namespace() : "", object.name()), object);
    return this;
  }

  @Override
  public ApiResource resource() {
    return resource;
  }

  @Override
  public boolean hasSynced() {
    return true;
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
    return Flux.never();
  }

  @Override
  public void close() {}
}
