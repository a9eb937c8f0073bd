package dev.metareactor.engine.kube;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An {@link ObjectApi} that passes every call to another: the base of an API that changes only some calls (the
 * writes of a preview, the writes a recorded sync adds to its record).
 */
public abstract class ForwardingObjectApi implements ObjectApi {

  private final ObjectApi delegate;

  protected ForwardingObjectApi(ObjectApi delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** Where the calls go. */
  protected final ObjectApi delegate() {
    return delegate;
  }

  @Override
  public Mono<KubeObject> get(ApiResource resource, String namespace, String name) {
    return delegate.get(resource, namespace, name);
  }

  @Override
  public Mono<List<KubeObject>> list(ApiResource resource, String labelSelector, boolean metadataOnly) {
    return delegate.list(resource, labelSelector, metadataOnly);
  }

  @Override
  public Mono<ObjectNode> getTree(ApiResource resource, String namespace, String name) {
    return delegate.getTree(resource, namespace, name);
  }

  @Override
  public Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun) {
    return delegate.apply(resource, configuration, fieldManager, dryRun);
  }

  @Override
  public Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return delegate.applyCreate(resource, configuration, fieldManager);
  }

  @Override
  public Mono<Written> create(ApiResource resource, ObjectNode object) {
    return delegate.create(resource, object);
  }

  @Override
  public Mono<Written> update(ApiResource resource, ObjectNode object) {
    return delegate.update(resource, object);
  }

  @Override
  public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    return delegate.patch(resource, namespace, name, type, body);
  }

  @Override
  public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    return delegate.patchStatus(resource, namespace, name, type, body);
  }

  @Override
  public Mono<Written> applyStatus(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return delegate.applyStatus(resource, configuration, fieldManager);
  }

  @Override
  public Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid) {
    return delegate.delete(resource, namespace, name, uid);
  }

  @Override
  public Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion) {
    return delegate.deleteAt(resource, namespace, name, resourceVersion);
  }
}
