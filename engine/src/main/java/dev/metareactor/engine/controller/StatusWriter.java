package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.tracing.SyncTrace;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The one status write of every kind: a CompositeController's parent, a DecoratorController's target, a
 * MapController's parent. What goes into the status is the kind's; how it is written, and what a refusal means, is
 * this class's alone.
 *
 * <p>The status replaces the object's whole status, as upstream's read-and-update replaces it, in one JSON Patch of
 * the status subresource (of the object itself when its resource has none): {@code test /metadata/uid}, then {@code
 * add /status}. The test of the UID keeps the write to the very object the cache showed: a namesake created since is
 * never written with the old one's status. There is no resourceVersion precondition, so an edit of the spec that
 * lands meanwhile does not turn the write into a conflict and a second sync (that edit brings its own sync, which
 * writes the status of the newer generation). A status is written only when it differs from the cached one, and from
 * what this writer last wrote while the cache does not show that write yet ({@link WrittenStatus}): a steady state
 * writes nothing.
 *
 * <p>How a write that the API server refuses ends, the same for every kind:
 *
 * <ul>
 *   <li><b>404</b>: the object is gone; completes with {@code false}, there is nothing to write any more.</li>
 *   <li><b>409</b>: a conflict; fails with the {@link ApiException} as it is, so that the sync runs again without an
 *       Event ({@link WriteConflicts}).</li>
 *   <li><b>422</b>: either the test of the UID failed or the API server refuses the status itself (its CRD's schema);
 *       one read of the object tells which. Gone, or another UID under the name: completes with {@code false}, as
 *       for a 404. The same object: fails with a {@link RefusedStatusException} {@code can't update status: <the
 *       server's message>}, which a kind reports as bad input.</li>
 *   <li>anything else: fails with {@code can't update status: <message>}.</li>
 * </ul>
 *
 * <p>The one read costs nothing in a steady state: it is made only after a 422.
 *
 * <p>Thread-safe. One per controller, so that what it wrote is remembered across that controller's syncs.
 */
public final class StatusWriter {

  private static final AttributeKey<String> KIND = AttributeKey.stringKey("k8s.object.kind");
  private static final AttributeKey<String> NAMESPACE = AttributeKey.stringKey("k8s.namespace.name");
  private static final AttributeKey<String> NAME = AttributeKey.stringKey("k8s.object.name");

  private final ObjectApi api;
  private final WrittenStatus written = new WrittenStatus();

  public StatusWriter(ObjectApi api) {
    this.api = Objects.requireNonNull(api, "api");
  }

  /**
   * Writes {@code status} over the object as cached, unless that is what it holds already.
   *
   * @param resource the object's resource
   * @param cached the object as the informer cache has it
   * @param cachedStatus its status as cached, {@code null} when it has none
   * @return {@code true} once written, or when nothing needed writing; {@code false} when the object is gone or was
   *     replaced by a namesake, so that nothing more (its finalizer) is written to it
   */
  public Mono<Boolean> write(ApiResource resource, KubeObject cached, @Nullable JsonNode cachedStatus,
      ObjectNode status) {
    if (!written.needsWriting(cached, cachedStatus, status)) {
      return Mono.just(true);
    }
    ArrayNode patch = KubeJson.nodes().arrayNode();
    patch.addObject().put("op", "test").put("path", "/metadata/uid").put("value", cached.uid());
    patch.addObject().put("op", "add").put("path", "/status").set("value", status);
    Mono<ObjectApi.Written> write = resource.hasStatusSubresource()
        ? api.patchStatus(resource, cached.namespace(), cached.name(), ObjectApi.PatchType.JSON, patch)
        : api.patch(resource, cached.namespace(), cached.name(), ObjectApi.PatchType.JSON, patch);
    // In a traced sync, one span for the status write and what a refusal takes (the read after a 422).
    return SyncTrace.child("write status", SpanKind.INTERNAL, Attributes.of(KIND, resource.kind(), NAMESPACE,
        cached.namespace(), NAME, cached.name()), ended(resource, cached, status, write));
  }

  /** How {@code write} ends, as {@link #write} says. */
  private Mono<Boolean> ended(ApiResource resource, KubeObject cached, ObjectNode status,
      Mono<ObjectApi.Written> write) {
    return write.doOnNext(done -> written.wrote(cached, done, status)).thenReturn(true)
        .onErrorResume(refused -> switch (ApiException.codeOf(refused)) {
          case 404 -> Mono.just(false);
          case 409 -> Mono.error(refused);
          case 422 -> SameObject.stillThere(api, resource, cached)
              .onErrorMap(unread -> new IllegalStateException(message(refused), refused))
              .flatMap(there -> there ? Mono.error(new RefusedStatusException(refused)) : Mono.just(false));
          default -> Mono.error(new IllegalStateException(message(refused), refused));
        });
  }

  private static String message(Throwable cause) {
    return "can't update status: " + cause.getMessage();
  }

  /**
   * The API server refuses the status itself (422 for the object the cache showed): bad input, the same again until
   * the status or the object's schema changes.
   */
  public static final class RefusedStatusException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    RefusedStatusException(Throwable cause) {
      super(message(cause), cause);
    }
  }
}
