package dev.metareactor.engine.controller;

import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import reactor.core.publisher.Mono;

/**
 * A controller's finalizer on the objects it syncs ({@code metacontroller.io/compositecontroller-<name>},
 * {@code metacontroller.io/decoratorcontroller-<name>}): added so a deleted object waits for the finalize hook,
 * removed once the hook says it is done (or when the controller no longer has a finalize hook, or is deleted).
 *
 * <p>Writes are JSON merge patches of {@code metadata.finalizers} carrying the object's resourceVersion: a
 * concurrent change to the list (another controller's finalizer) makes the write fail with a conflict and the
 * object is synced again with the new list, so no one's finalizer is ever dropped.
 */
public final class Finalizers {

  /** The garbage collector's own finalizers: while one is present, the GC is busy with the children. */
  private static final Set<String> GARBAGE_COLLECTOR = Set.of("foregroundDeletion", "orphan");

  private final String name;
  private final ApiWriter api;
  private final KubernetesSerialization json;

  public Finalizers(String name, ApiWriter api, KubernetesSerialization json) {
    this.name = Objects.requireNonNull(name, "name");
    this.api = Objects.requireNonNull(api, "api");
    this.json = Objects.requireNonNull(json, "json");
  }

  public String name() {
    return name;
  }

  public boolean presentOn(GenericKubernetesResource object) {
    List<String> finalizers = object.getMetadata().getFinalizers();
    return finalizers != null && finalizers.contains(name);
  }

  /**
   * Whether a deleted object's children may still be managed: our finalizer holds the object and the garbage
   * collector is not working on it (with {@code foregroundDeletion} or {@code orphan} present, children are the
   * garbage collector's business).
   */
  public boolean mayManageChildrenWhileDeleting(GenericKubernetesResource object) {
    List<String> finalizers = object.getMetadata().getFinalizers();
    return finalizers != null && finalizers.contains(name)
        && finalizers.stream().noneMatch(GARBAGE_COLLECTOR::contains);
  }

  /** Adds the finalizer; completes with the object as written (or as given if it was there already). */
  public Mono<GenericKubernetesResource> add(ApiResource resource, GenericKubernetesResource object) {
    if (presentOn(object)) {
      return Mono.just(object);
    }
    List<String> finalizers = new ArrayList<>(current(object));
    finalizers.add(name);
    return write(resource, object, finalizers);
  }

  /**
   * Removes the finalizer; completes with the object as written, as given if it was not there, or empty if the
   * object is gone (removing the last finalizer of a deleted object lets it go at once).
   */
  public Mono<GenericKubernetesResource> remove(ApiResource resource, GenericKubernetesResource object) {
    if (!presentOn(object)) {
      return Mono.just(object);
    }
    List<String> finalizers = new ArrayList<>(current(object));
    finalizers.removeIf(name::equals);
    return write(resource, object, finalizers);
  }

  private Mono<GenericKubernetesResource> write(ApiResource resource, GenericKubernetesResource object,
      List<String> finalizers) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("finalizers", finalizers);
    metadata.put("resourceVersion", object.getMetadata().getResourceVersion());
    return api.mergePatch(resource, object.getMetadata().getNamespace(), object.getMetadata().getName(),
            json.asJson(Map.of("metadata", metadata)))
        .onErrorResume(e -> e instanceof KubernetesClientException k && k.getCode() == 404, e -> Mono.empty());
  }

  private static List<String> current(GenericKubernetesResource object) {
    List<String> finalizers = object.getMetadata().getFinalizers();
    return finalizers == null ? List.of() : finalizers;
  }
}
