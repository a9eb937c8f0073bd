package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

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
  /** How many objects a retiring controller takes its finalizer off at once. */
  private static final int RETIRE_WRITES_IN_PARALLEL = 8;
  private static final Logger LOG = LoggerFactory.getLogger(Finalizers.class);

  private final String name;
  private final ObjectApi api;

  public Finalizers(String name, ObjectApi api) {
    this.name = Objects.requireNonNull(name, "name");
    this.api = Objects.requireNonNull(api, "api");
  }

  public String name() {
    return name;
  }

  public boolean presentOn(KubeObject object) {
    return object.finalizers().contains(name);
  }

  /**
   * Whether a deleted object's children may still be managed: our finalizer holds the object and the garbage
   * collector is not working on it (with {@code foregroundDeletion} or {@code orphan} present, children are the
   * garbage collector's business).
   */
  public boolean mayManageChildrenWhileDeleting(KubeObject object) {
    List<String> finalizers = object.finalizers();
    return finalizers.contains(name) && finalizers.stream().noneMatch(GARBAGE_COLLECTOR::contains);
  }

  /** Adds the finalizer; completes with the object as written (or as given if it was there already). */
  public Mono<KubeObject> add(ApiResource resource, KubeObject object) {
    if (presentOn(object)) {
      return Mono.just(object);
    }
    ObjectNode patch = KubeJson.nodes().objectNode();
    ObjectNode metadata = patch.putObject("metadata");
    ArrayNode finalizers = metadata.putArray("finalizers");
    object.finalizers().forEach(finalizers::add);
    finalizers.add(name);
    metadata.put("resourceVersion", object.resourceVersion());
    return api.mergePatch(resource, object.namespace(), object.name(), patch)
        .map(ObjectApi.Written::object)
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty());
  }

  /**
   * Removes the finalizer from every one of {@code objects} (a controller that was deleted: {@code controller} names
   * it in the log lines). A failure is logged and leaves that object as it is, to be fixed by hand; the others go on.
   */
  public Mono<Void> removeFromAll(List<SyncedObject> objects, String controller) {
    return Flux.fromIterable(objects)
        .flatMap(finalized -> remove(finalized.resource(), finalized.object())
            .doOnNext(updated -> LOG.info("{} is deleted: removed its finalizer from {}", controller,
                finalized.object().describe()))
            .onErrorResume(e -> {
              LOG.error("{} is deleted but its finalizer could not be removed from {}: {}", controller,
                  finalized.object().describe(), e.getMessage());
              return Mono.empty();
            }), RETIRE_WRITES_IN_PARALLEL)
        .then();
  }

  /**
   * Removes the finalizer; completes with the object as written, as given if it was not there, or empty if the
   * object is gone (removing the last finalizer of a deleted object lets it go at once).
   */
  public Mono<KubeObject> remove(ApiResource resource, KubeObject object) {
    return remove(resource, object, REMOVE_ATTEMPTS);
  }

  private Mono<KubeObject> remove(ApiResource resource, KubeObject object, int attempts) {
    int index = object.finalizers().indexOf(name);
    if (index < 0) {
      return Mono.just(object);
    }
    String path = "/metadata/finalizers/" + index;
    ArrayNode patch = KubeJson.nodes().arrayNode();
    patch.addObject().put("op", "test").put("path", path).put("value", name);
    patch.addObject().put("op", "remove").put("path", path);
    String namespace = object.namespace();
    String objectName = object.name();
    return api.patch(resource, namespace, objectName, ObjectApi.PatchType.JSON, patch)
        .map(ObjectApi.Written::object)
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty())
        // 422: the test failed, the list moved; 409: the server saw a concurrent write. Read it again and retry.
        .onErrorResume(e -> attempts > 1 && (ApiException.codeOf(e) == 422 || ApiException.codeOf(e) == 409),
            e -> api.get(resource, namespace, objectName)
                .onErrorResume(gone -> ApiException.codeOf(gone) == 404, gone -> Mono.empty())
                .flatMap(latest -> remove(resource, latest, attempts - 1)));
  }

}
