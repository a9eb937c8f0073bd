package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ForwardingObjectApi;
import dev.metareactor.engine.kube.ObjectApi;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The engine's {@link ObjectApi} with {@code --record-syncs}: every write made inside a recorded sync is added to its
 * {@link SyncRecord} (verb, object, result) as it completes; reads, and writes outside a recorded sync, pass through
 * untouched.
 */
public final class SyncRecordingApi extends ForwardingObjectApi {

  public SyncRecordingApi(ObjectApi api) {
    super(api);
  }




  @Override
  public Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun) {
    Mono<Written> applied = delegate().apply(resource, configuration, fieldManager, dryRun);
    return dryRun ? applied : recorded("apply", resource, namespaceOf(configuration), nameOf(configuration), applied);
  }

  @Override
  public Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return recorded("create", resource, namespaceOf(configuration), nameOf(configuration),
        delegate().applyCreate(resource, configuration, fieldManager));
  }

  @Override
  public Mono<Written> create(ApiResource resource, ObjectNode object) {
    return recorded("create", resource, namespaceOf(object), nameOf(object), delegate().create(resource, object));
  }

  @Override
  public Mono<Written> update(ApiResource resource, ObjectNode object) {
    return recorded("update", resource, namespaceOf(object), nameOf(object), delegate().update(resource, object));
  }

  @Override
  public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    return recorded("patch", resource, namespace, name, delegate().patch(resource, namespace, name, type, body));
  }

  @Override
  public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    return recorded("status", resource, namespace, name,
        delegate().patchStatus(resource, namespace, name, type, body));
  }

  @Override
  public Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid) {
    return recorded("delete", resource, namespace, name, delegate().delete(resource, namespace, name, uid));
  }

  @Override
  public Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion) {
    return recorded("delete", resource, namespace, name,
        delegate().deleteAt(resource, namespace, name, resourceVersion));
  }

  private static <T> Mono<T> recorded(String verb, ApiResource resource, String namespace, String name,
      Mono<T> write) {
    return Mono.deferContextual(context -> {
      SyncRecord record = SyncRecord.of(context);
      if (record == null) {
        return write;
      }
      return write
          .doOnSuccess(done -> record.write(new SyncRecord.Write(verb, resource, namespace, name, "2xx")))
          .doOnError(error -> record.write(new SyncRecord.Write(verb, resource, namespace, name,
              ApiException.codeOf(error) > 0 ? Integer.toString(ApiException.codeOf(error)) : "error")));
    });
  }

  private static String namespaceOf(JsonNode object) {
    return object.path("metadata").path("namespace").asString("");
  }

  private static String nameOf(JsonNode object) {
    return object.path("metadata").path("name").asString("");
  }
}
