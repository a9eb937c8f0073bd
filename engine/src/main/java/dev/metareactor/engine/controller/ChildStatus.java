package dev.metareactor.engine.controller;

import dev.metareactor.apply.ServerSideApply;
import dev.metareactor.engine.api.ChildStatusAnnotation;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@code status} a sync answer gives a desired child or attachment, written to that object's status subresource
 * when the controller asks for it ({@link ChildStatusAnnotation}, upstream's #766); {@link #OFF} otherwise, which
 * drops it as Metacontroller does. A desired object without {@code status} keeps the status it has.
 *
 * <p>Written as the parent's own status is, by {@code --apply-strategy}:
 * <ul>
 *   <li>dynamic apply: through a {@link StatusWriter} — a JSON Patch of the status subresource guarded by the
 *       object's UID that replaces the whole status, sent only when the status differs from the cached one and from
 *       the one last written while the cache does not show that write yet;</li>
 *   <li>server-side apply: an apply of the status subresource as the engine's field manager ({@link
 *       ObjectApi#applyStatus}), whose entry in {@code managedFields} ({@code subresource: status}) the cache keeps
 *       ({@link KubeObject#appliedStatusFields}): sent only when that apply would change something ({@link
 *       ServerSideApply#unchanged}), so fields others write into the status stay theirs and a field the hook drops
 *       is removed; and, as above, not again while the cache does not show the last apply yet.</li>
 * </ul>
 * Neither reads the object first: the decision is the cache's, a steady state writes nothing, and the echo of a
 * write (the child's update event) finds the status already there.
 *
 * <p>A type without a status subresource (its status is part of the object, which the appliers never write: they
 * keep the observed status) gets nothing written; the first parent whose answer gives one of its objects a status
 * gets a {@code ChildStatusNotWritten} Warning and a log line naming the type, once per type for the controller's
 * life. A refused write is reported as the other writes of the owned objects are; 404 (gone) and 409 (a conflict)
 * are not failures, the next event brings the parent back.
 *
 * <p>Thread-safe: one per controller.
 */
public final class ChildStatus {

  private static final Logger LOG = LoggerFactory.getLogger(ChildStatus.class);

  private final ObjectApi api;
  private final ApplyStrategy strategy;
  private final String fieldManager;
  private final ParentEvents events;
  private final StatusWriter patches;
  /** What the status applies wrote that the cache may not show yet. */
  private final WrittenStatus applied = new WrittenStatus();
  /** The types already reported as having no status subresource. */
  private final Set<ApiResource> reported = ConcurrentHashMap.newKeySet();

  /**
   * @param strategy {@code --apply-strategy}
   * @param fieldManager {@code --apply-strategy-ssa-field-manager}, the manager of the status applies
   * @param events where the Warning about a type without a status subresource goes
   */
  public ChildStatus(ObjectApi api, ApplyStrategy strategy, String fieldManager, ParentEvents events) {
    this.api = Objects.requireNonNull(api, "api");
    this.strategy = Objects.requireNonNull(strategy, "strategy");
    this.fieldManager = Objects.requireNonNull(fieldManager, "fieldManager");
    this.events = Objects.requireNonNull(events, "events");
    this.patches = new StatusWriter(api);
  }

  /**
   * Writes the status {@code desired} gives {@code current}, when it gives one and the object does not have it yet.
   *
   * @param parent the object whose answer it is (where a Warning goes)
   * @param type the object's type
   * @param current the object as cached, or as its create answered
   * @param desired the object as the hook asked for it
   * @return completes when written or when there is nothing to write; fails with what the API server refused
   */
  public Mono<Void> write(KubeObject parent, ChildType type, KubeObject current, ObjectNode desired) {
    if (!(desired.get("status") instanceof ObjectNode status) || current.deleting()) {
      return Mono.empty();
    }
    ApiResource resource = type.resource();
    if (!resource.hasStatusSubresource()) {
      if (reported.add(resource)) {
        String message = resource.kind() + " (" + resource.resource() + "." + resource.apiVersion() + ") has no status"
            + " subresource: the status the sync answer gives its objects is not written (" + ChildStatusAnnotation.KEY
            + ")";
        LOG.warn("{}: {}", parent.describe(), message);
        events.record(parent, EventRecorder.Type.Warning, "ChildStatusNotWritten", message);
      }
      return Mono.empty();
    }
    Mono<?> write = strategy == ApplyStrategy.SERVER_SIDE_APPLY ? apply(resource, current, status)
        : patches.write(resource, current, current.toTree().get("status"), status);
    return write
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409, e -> Mono.empty())
        .onErrorMap(e -> new IllegalStateException("can't write the status of " + resource.kind() + " "
            + current.namespacedName() + ": " + (e.getMessage() == null ? e.getClass().getSimpleName()
            : e.getMessage()), e))
        .then();
  }

  /** The status applied to the subresource, unless that changes nothing or was just done. */
  private Mono<Void> apply(ApiResource resource, KubeObject current, ObjectNode status) {
    ObjectNode observed = current.toTree();
    ObjectNode configuration = KubeJson.nodes().objectNode()
        .put("apiVersion", current.apiVersion()).put("kind", current.kind());
    ObjectNode metadata = configuration.putObject("metadata").put("name", current.name());
    if (!current.namespace().isEmpty()) {
      metadata.put("namespace", current.namespace());
    }
    configuration.set("status", status);
    JsonNode observedStatus = observed.get("status");
    if (!applied.needsWriting(current, observedStatus, status)
        || ServerSideApply.unchanged(observed, configuration, current.appliedStatusFields())) {
      return Mono.empty();
    }
    return api.applyStatus(resource, configuration, fieldManager)
        .doOnNext(written -> applied.wrote(current, written, status))
        .then();
  }

  @Override
  public String toString() {
    return "child status by " + strategy;
  }
}
