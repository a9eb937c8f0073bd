package dev.metareactor.engine.controller;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.OwnerRef;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A resource whose objects a controller syncs — a CompositeController's parent resource, each of a
 * DecoratorController's target resources — with its informer, which of its objects the controller selects, and the
 * one rule for which objects the controller is responsible: those it selects, and those that still carry its
 * finalizer (deselected or deleted, they wait for the finalize hook).
 */
public final class SyncedResource {

  private final ApiResource resource;
  private final InformerLease informer;
  private final Predicate<KubeObject> selects;
  private final Finalizers finalizers;

  /**
   * @param selects whether the controller's selectors match an object (labels, annotations)
   * @param finalizers the controller's finalizer
   */
  public SyncedResource(ApiResource resource, InformerLease informer, Predicate<KubeObject> selects,
      Finalizers finalizers) {
    this.resource = Objects.requireNonNull(resource, "resource");
    this.informer = Objects.requireNonNull(informer, "informer");
    this.selects = Objects.requireNonNull(selects, "selects");
    this.finalizers = Objects.requireNonNull(finalizers, "finalizers");
  }

  public ApiResource resource() {
    return resource;
  }

  public InformerLease informer() {
    return informer;
  }

  /** Whether the controller's selectors match {@code object}; a responsible object that they do not is finalized. */
  public boolean selects(KubeObject object) {
    return selects.test(object);
  }

  /** Whether the controller syncs {@code object}: selected, or still holding our finalizer. */
  public boolean responsibleFor(KubeObject object) {
    return selects(object) || finalizers.presentOn(object);
  }

  /** The cached object {@code namespace/name}, if the controller is responsible for it. */
  public Optional<KubeObject> responsible(String namespace, String name) {
    return informer.get(namespace, name).filter(this::responsibleFor);
  }

  /**
   * The object of this resource that {@code controller}, the ControllerRef of {@code owned}, points to: found by
   * name in the cache (in {@code owned}'s namespace when this resource is namespaced), checked by UID, and only if
   * the controller is responsible for it.
   */
  public Optional<KubeObject> controllerOf(KubeObject owned, OwnerRef controller) {
    if (controller == null || !controller.kind().equals(resource.kind())
        || !ApiResource.groupOf(controller.apiVersion()).equals(resource.group())) {
      return Optional.empty();
    }
    return informer.get(resource.namespaced() ? owned.namespace() : "", controller.name())
        .filter(object -> Objects.equals(object.uid(), controller.uid()))
        .filter(this::responsibleFor);
  }

  @Override
  public String toString() {
    return resource.toString();
  }
}
