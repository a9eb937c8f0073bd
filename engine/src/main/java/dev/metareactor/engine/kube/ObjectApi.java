package dev.metareactor.engine.kube;

import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What controllers do to objects through the API server: the rare uncached read, creates, updates, patches and
 * deletes. Bodies are JSON trees, written as Metacontroller's Go client writes them (so the API server reads every
 * number as it would from Metacontroller: {@code 3}, never {@code 3.0}). {@link ApiWriter} is the real one
 * (rate-limited, metered); tests use an in-memory one that records every action, so a sync can be checked for
 * exactly the requests it makes without a cluster.
 *
 * <p>Every method is non-blocking. A refused request fails with {@link ApiException} carrying the HTTP code.
 */
public interface ObjectApi {

  /** The content types of {@code PATCH}. */
  public enum PatchType {
    /** RFC 6902 JSON Patch. */
    JSON("application/json-patch+json"),
    /** RFC 7386 JSON merge patch. */
    MERGE("application/merge-patch+json"),
    /** Kubernetes strategic merge patch (built-in types only). */
    STRATEGIC("application/strategic-merge-patch+json"),
    /** Kubernetes server-side apply (a JSON body is valid YAML). */
    APPLY("application/apply-patch+yaml");

    private final String contentType;

    PatchType(String contentType) {
      this.contentType = contentType;
    }

    public String contentType() {
      return contentType;
    }
  }

  /**
   * What the API server answered a write with: the object as written, parsed only when asked for — most writes
   * (a child created, a status replaced) never read it.
   */
  public record Written(byte[] answer) {
    /** The object as the API server stored it. */
    public KubeObject object() {
      return KubeObject.parse(answer);
    }

    /** The written object's UID and new resourceVersion, read without parsing the rest; {@code null} if absent. */
    public @Nullable ObjectVersion version() {
      return ObjectVersion.of(answer);
    }
  }

  /** An uncached read. */
  Mono<KubeObject> get(ApiResource resource, String namespace, String name);

  /**
   * An uncached list of the objects of {@code resource} (every namespace) that {@code labelSelector} selects, read
   * page by page; with {@code metadataOnly}, only their metadata ({@code PartialObjectMetadata}).
   */
  Mono<List<KubeObject>> list(ApiResource resource, String labelSelector, boolean metadataOnly);

  /** An uncached read of the whole object as a tree, {@code metadata.managedFields} included. */
  Mono<ObjectNode> getTree(ApiResource resource, String namespace, String name);

  /**
   * A server-side apply of {@code configuration} (its {@code metadata.name} and namespace name the object) as
   * {@code fieldManager}, taking over fields other managers hold ({@code force}); creates the object when it does not
   * exist. With {@code dryRun}, the API server answers with the object the apply would make and stores nothing.
   */
  Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun);

  /**
   * A server-side apply of {@code configuration} as {@code fieldManager} that only ever creates: when an object of
   * that name exists — whoever's it is — it fails with HTTP 409 and leaves the object as it is. The object it creates
   * is the manager's as {@link #apply}'s would be (its {@code Apply} entry in {@code managedFields} names exactly the
   * configuration's fields), which a {@code POST} cannot make (its entry is an {@code Update} that also holds the
   * fields the server defaulted).
   */
  Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager);

  /** A create; the namespace is the object's. */
  Mono<Written> create(ApiResource resource, ObjectNode object);

  /** PUT of the whole object, carrying its resourceVersion: a conflict fails with HTTP 409. */
  Mono<Written> update(ApiResource resource, ObjectNode object);

  /** A patch of the given type; {@code body} is sent as the other bodies are (numbers as Go writes them). */
  Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body);

  /** A patch of the status subresource. */
  Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type, JsonNode body);

  /**
   * A server-side apply of {@code configuration} ({@code apiVersion}, {@code kind}, {@code metadata.name} and
   * namespace, {@code status}) to the status subresource as {@code fieldManager}, with {@code force}: the API server
   * records the fields in an entry of its own ({@code subresource: status}). Never creates: 404 when the object is
   * not there.
   */
  Mono<Written> applyStatus(ApiResource resource, ObjectNode configuration, String fieldManager);

  /** A JSON merge patch. */
  default Mono<Written> mergePatch(ApiResource resource, String namespace, String name, JsonNode body) {
    return patch(resource, namespace, name, PatchType.MERGE, body);
  }

  /**
   * Deletes with background propagation and, when {@code uid} is given, a UID precondition (so an object
   * re-created under the same name is never deleted by mistake). Completes empty when the object is gone.
   */
  Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid);

  /**
   * Deletes the object only if it is still at {@code resourceVersion} (a precondition): fails with HTTP 409 when
   * it changed since. Completes empty when the object is gone.
   */
  Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion);
}
