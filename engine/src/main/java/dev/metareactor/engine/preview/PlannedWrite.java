package dev.metareactor.engine.preview;

import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.ApiResource;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * One write a sync would make, as the API server answered its dry run.
 *
 * @param about the key of the sync that would make it ({@code null} for a write outside a sync)
 * @param sequence the order in which the engine would send it, among all writes of the preview
 * @param verb what the write does to the object
 * @param resource the object's resource
 * @param namespace the object's namespace ({@code ""} when cluster-scoped)
 * @param name the object's name
 * @param before the object as it is now ({@code null} when a create would make it)
 * @param after the object as the API server would store it ({@code null} after a delete, or when refused)
 * @param diff the change as a JSON merge patch (RFC 7386) from {@code before} to {@code after}, without the fields
 *     the API server maintains ({@link MergeDiff#comparable}); the whole object for a create, {@code null} for a
 *     delete
 * @param refusal why the API server refused the dry run ({@code 409 ...}), or {@code null}: a refused write is
 *     shown but changes nothing
 */
public record PlannedWrite(OneShot.@Nullable Unit about, long sequence, Verb verb, ApiResource resource,
    String namespace, String name, @Nullable ObjectNode before, @Nullable ObjectNode after, @Nullable JsonNode diff,
    @Nullable String refusal) {

  /** What a write does, as {@code metareactor preview} names it. */
  public enum Verb {
    /** A new object (a child, an attachment's namesake never: attachments are only updated). */
    CREATE,
    /** A change of an existing object's fields (spec, labels, annotations, finalizers...). */
    UPDATE,
    /** An object deleted. */
    DELETE,
    /** A status subresource written. */
    STATUS,
    /** An object given this controller's ControllerRef. */
    ADOPT,
    /** An object's ControllerRef to this controller removed. */
    RELEASE,
    /** A ControllerRevision written (rolling updates' history). */
    REVISION;

    /** The verb as printed: lower case. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public PlannedWrite {
    Objects.requireNonNull(verb, "verb");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  /** Whether the write would change the cluster: not refused, and a create, a delete or a non-empty change. */
  public boolean changes() {
    if (refusal != null) {
      return false;
    }
    return switch (verb) {
      case CREATE, DELETE -> true;
      case REVISION -> after == null || diff != null && !diff.isEmpty(); // deleted, or written
      default -> diff != null && !diff.isEmpty();
    };
  }

  /** {@code namespace/name}, or {@code name} when cluster-scoped. */
  public String objectName() {
    return namespace.isEmpty() ? name : namespace + "/" + name;
  }
}
