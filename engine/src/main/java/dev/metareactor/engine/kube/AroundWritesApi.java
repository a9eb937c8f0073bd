package dev.metareactor.engine.kube;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An {@link ObjectApi} that does something around every write it passes on (a recorded sync's record, a traced
 * sync's span), named by its verb and object; reads and dry runs pass through untouched.
 *
 * <p>The verbs: {@code apply}, {@code create} (a create, or a server-side apply that only creates), {@code update},
 * {@code patch}, {@code status} (a patch or an apply of the status subresource), {@code delete}.
 */
public abstract class AroundWritesApi extends ForwardingObjectApi {

  protected AroundWritesApi(ObjectApi delegate) {
    super(delegate);
  }

  /**
   * {@code write} with what this API does around it.
   *
   * @param namespace the object's namespace, empty for a cluster-scoped one
   */
  protected abstract <T> Mono<T> around(String verb, ApiResource resource, String namespace, String name,
      Mono<T> write);

  @Override
  public Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun) {
    Mono<Written> applied = delegate().apply(resource, configuration, fieldManager, dryRun);
    return dryRun ? applied : around("apply", resource, namespaceOf(configuration), nameOf(configuration), applied);
  }

  @Override
  public Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return around("create", resource, namespaceOf(configuration), nameOf(configuration),
        delegate().applyCreate(resource, configuration, fieldManager));
  }

  @Override
  public Mono<Written> create(ApiResource resource, ObjectNode object) {
    return around("create", resource, namespaceOf(object), nameOf(object), delegate().create(resource, object));
  }

  @Override
  public Mono<Written> update(ApiResource resource, ObjectNode object) {
    return around("update", resource, namespaceOf(object), nameOf(object), delegate().update(resource, object));
  }

  @Override
  public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    return around("patch", resource, namespace, name, delegate().patch(resource, namespace, name, type, body));
  }

  @Override
  public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    return around("status", resource, namespace, name,
        delegate().patchStatus(resource, namespace, name, type, body));
  }

  @Override
  public Mono<Written> applyStatus(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return around("status", resource, namespaceOf(configuration), nameOf(configuration),
        delegate().applyStatus(resource, configuration, fieldManager));
  }

  @Override
  public Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid) {
    return around("delete", resource, namespace, name, delegate().delete(resource, namespace, name, uid));
  }

  @Override
  public Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion) {
    return around("delete", resource, namespace, name,
        delegate().deleteAt(resource, namespace, name, resourceVersion));
  }

  private static String namespaceOf(JsonNode object) {
    return object.path("metadata").path("namespace").asString("");
  }

  private static String nameOf(JsonNode object) {
    return object.path("metadata").path("name").asString("");
  }
}
