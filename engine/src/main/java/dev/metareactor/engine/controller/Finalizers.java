package dev.metareactor.engine.controller;

import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
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
 * <p>No write can drop someone else's finalizer. Adding is a JSON merge patch of the list carrying the object's
 * resourceVersion: any concurrent change makes it fail with a conflict, and the object is synced again. Removing
 * is a JSON Patch that tests that our name is still at the index it had and removes it there: changes elsewhere in
 * the object (a status write a moment earlier) do not disturb it, so removal also works where nothing would retry
 * it (a controller being deleted); if the list itself moved, the object is read again and the removal retried.
 */
public final class Finalizers {

  /** The garbage collector's own finalizers: while one is present, the GC is busy with the children. */
  private static final Set<String> GARBAGE_COLLECTOR = Set.of("foregroundDeletion", "orphan");
  private static final int REMOVE_ATTEMPTS = 3;

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
    return remove(resource, object, REMOVE_ATTEMPTS);
  }

  private Mono<GenericKubernetesResource> remove(ApiResource resource, GenericKubernetesResource object,
      int attempts) {
    int index = current(object).indexOf(name);
    if (index < 0) {
      return Mono.just(object);
    }
    String path = "/metadata/finalizers/" + index;
    String patch = json.asJson(List.of(
        Map.of("op", "test", "path", path, "value", name),
        Map.of("op", "remove", "path", path)));
    String namespace = object.getMetadata().getNamespace();
    String objectName = object.getMetadata().getName();
    return api.patch(resource, namespace, objectName, PatchContext.of(PatchType.JSON), patch)
        .onErrorResume(e -> status(e) == 404, e -> Mono.empty())
        // 422: the test failed, the list moved; 409: the server saw a concurrent write. Read it again and retry.
        .onErrorResume(e -> attempts > 1 && (status(e) == 422 || status(e) == 409),
            e -> api.get(resource, namespace, objectName)
                .onErrorResume(gone -> status(gone) == 404, gone -> Mono.empty())
                .flatMap(latest -> remove(resource, latest, attempts - 1)));
  }

  private static int status(Throwable e) {
    return e instanceof KubernetesClientException k ? k.getCode() : -1;
  }

  private Mono<GenericKubernetesResource> write(ApiResource resource, GenericKubernetesResource object,
      List<String> finalizers) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    metadata.put("finalizers", finalizers);
    metadata.put("resourceVersion", object.getMetadata().getResourceVersion());
    return api.mergePatch(resource, object.getMetadata().getNamespace(), object.getMetadata().getName(),
            json.asJson(Map.of("metadata", metadata)))
        .onErrorResume(e -> status(e) == 404, e -> Mono.empty());
  }

  private static List<String> current(GenericKubernetesResource object) {
    List<String> finalizers = object.getMetadata().getFinalizers();
    return finalizers == null ? List.of() : finalizers;
  }
}
