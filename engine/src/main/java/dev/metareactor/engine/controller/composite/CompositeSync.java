package dev.metareactor.engine.controller.composite;

import dev.metareactor.apply.JsonEquality;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.HookCaller;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.LabelSelector;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * One sync of one parent of a CompositeController, in upstream's order:
 *
 * <ol>
 *   <li>the parent from the informer cache (gone, or not this controller's: done);</li>
 *   <li>the finalizer: added when the controller has a finalize hook, removed when it has none;</li>
 *   <li>the parent's child selector ({@code spec.selector}, or {@code controller-uid} with
 *       {@code generateSelector}) and the claim of its children ({@link ChildClaimer});</li>
 *   <li>its related objects, when the controller has a customize hook ({@link RelatedObjects});</li>
 *   <li>the hook: {@code finalize} when the parent is being deleted or no longer matches
 *       {@code parentResource.labelSelector} and the controller has a finalize hook, else {@code sync};</li>
 *   <li>the whole answer is checked before anything is written: every desired child of a declared type, in the
 *       parent's namespace, matching the parent's selector; an answer that fails any check writes nothing;</li>
 *   <li>children are converged ({@link ChildrenManager}) unless the parent is being deleted and either it is
 *       not held by our finalizer or the garbage collector is working on it;</li>
 *   <li>the status (the hook's, plus {@code observedGeneration}) replaces the parent's, written only when it
 *       differs from the cached one;</li>
 *   <li>when finalizing and the hook answered {@code finalized: true}, the finalizer is removed.</li>
 * </ol>
 *
 * <p>Reads come from the informer caches only (the claim's one check before adopting aside), so a steady-state
 * resync makes no API request at all.
 */
final class CompositeSync {

  private static final Logger LOG = LoggerFactory.getLogger(CompositeSync.class);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** The hooks a CompositeController may call; {@code null} where it has none. */
  record Hooks(HookCaller syncHook, HookCaller finalizeHook) {}

  private final CompositeControllerSpec spec;
  private final JsonNode controllerObject;
  private final ApiResource parentResource;
  private final InformerLease parents;
  private final List<ChildType> childTypes;
  private final Hooks hooks;
  private final ChildClaimer claimer;
  private final RelatedObjects<ParentKey> related;
  private final ChildrenManager children;
  private final Finalizers finalizers;
  private final ApiWriter api;
  private final Predicate<KubeObject> responsible;
  private final DesiredObjects desiredObjects;

  CompositeSync(CompositeControllerSpec spec, JsonNode controllerObject, ApiResource parentResource,
      InformerLease parents, List<ChildType> childTypes, Hooks hooks, ChildClaimer claimer, RelatedObjects<ParentKey> related,
      ChildrenManager children, Finalizers finalizers, ApiWriter api, Predicate<KubeObject> responsible) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.controllerObject = Objects.requireNonNull(controllerObject, "controllerObject");
    this.parentResource = Objects.requireNonNull(parentResource, "parentResource");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.childTypes = List.copyOf(childTypes);
    this.hooks = Objects.requireNonNull(hooks, "hooks");
    this.claimer = Objects.requireNonNull(claimer, "claimer");
    this.related = Objects.requireNonNull(related, "related");
    this.children = Objects.requireNonNull(children, "children");
    this.finalizers = Objects.requireNonNull(finalizers, "finalizers");
    this.api = Objects.requireNonNull(api, "api");
    this.responsible = Objects.requireNonNull(responsible, "responsible");
    this.desiredObjects = new DesiredObjects("children", "parent",
        "spec.childResources of " + CompositeController.KIND + " " + spec.name());
  }

  /** The parent as cached now, if it exists and this controller is responsible for it. */
  Optional<KubeObject> parent(ParentKey key) {
    return parents.get(key.namespace(), key.name()).filter(responsible);
  }

  /**
   * Syncs the parent.
   *
   * @return when to sync again regardless of events (empty for never); fails when the hook failed or answered
   *     garbage, or a write failed
   */
  Mono<Optional<Duration>> sync(ParentKey key) {
    Optional<KubeObject> found = parent(key);
    if (found.isEmpty()) {
      return Mono.just(Optional.empty());
    }
    return syncFinalizer(found.get())
        .filter(responsible) // removing our finalizer may have made the parent none of our business
        .flatMap(parent -> syncParent(key, parent))
        .defaultIfEmpty(Optional.empty());
  }

  private Mono<KubeObject> syncFinalizer(KubeObject parent) {
    if (hooks.finalizeHook() == null) {
      return finalizers.remove(parentResource, parent);
    }
    if (!parent.deleting()) {
      return finalizers.add(parentResource, parent);
    }
    return Mono.just(parent);
  }

  private Mono<Optional<Duration>> syncParent(ParentKey key, KubeObject parent) {
    boolean finalizing = hooks.finalizeHook() != null
        && (parent.deleting() || !spec.parentSelector().matches(parent.labels()));
    HookCaller hook = finalizing ? hooks.finalizeHook() : hooks.syncHook();
    if (hook == null) {
      return Mono.error(new IllegalStateException("sync hook not defined for " + CompositeController.KIND + " "
          + spec.name()));
    }
    ObjectNode parentJson = parent.toTree();
    LabelSelector selector = ChildSelector.of(parent, parentJson, spec.generateSelector());
    HookCaller.RootObject root = new HookCaller.RootObject(parent.kind(), parent.namespace(), parent.name());
    return claimer.claim(parent, parentResource, selector, childTypes)
        .zipWhen(observed -> related.of(key, parent, parentJson, parentResource, versionOf(finalizing)))
        .flatMap(observedAndRelated -> hook.call(
                request(parentJson, observedAndRelated.getT1(), observedAndRelated.getT2(), finalizing), root)
            .map(body -> SyncResponse.parse(body, "children", unknownFields(finalizing),
                field -> LOG.debug("{} hook of {} answered unknown field {} for {}", finalizing ? "finalize" : "sync",
                    spec.name(), field, root)))
            .flatMap(response -> apply(parent, parentJson, observedAndRelated.getT1(), selector, response,
                finalizing)));
  }

  private Mono<Optional<Duration>> apply(KubeObject parent, ObjectNode parentJson,
      Map<ChildType, List<KubeObject>> observed, LabelSelector selector, SyncResponse response,
      boolean finalizing) {
    List<DesiredChild> desired = desiredChildren(parent, response.children(), selector);
    boolean deleting = parent.deleting();
    boolean finalized = finalizing && response.finalized();
    boolean manageChildren = !finalized
        && (!deleting || (hooks.finalizeHook() != null && finalizers.mayManageChildrenWhileDeleting(parent)));
    Mono<Void> manage = manageChildren ? children.manage(parent, observed, desired) : Mono.empty();
    // Status is written even when some child writes failed, as upstream does; the failure is reported after.
    return manage.materialize()
        .flatMap(childSignal -> updateStatus(parent, parentJson, response.status())
            .flatMap(latest -> finalized ? finalizers.remove(parentResource, latest).then() : Mono.<Void>empty())
            .then(childSignal.hasError() ? Mono.error(childSignal.getThrowable()) : Mono.empty()))
        .then(Mono.just(Optional.ofNullable(response.resyncAfter())));
  }

  private ObjectNode request(ObjectNode parentJson, Map<ChildType, List<KubeObject>> observed,
      ObjectNode relatedObjects, boolean finalizing) {
    HookSpec.HookVersion version = versionOf(finalizing);
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set("parent", parentJson);
    ObjectNode childMap = request.putObject("children");
    observed.forEach((type, objects) -> {
      ObjectNode group = childMap.putObject(ObjectMapKeys.groupKey(type.resource().kind(), type.resource().apiVersion()));
      for (KubeObject child : objects) {
        // The observed children go out as they came: the request is only written, so nothing parses them.
        group.putRawValue(ObjectMapKeys.objectKey(version, parentResource.namespaced(), child.namespace(),
            child.name()), child.raw());
      }
    });
    request.set("related", relatedObjects);
    request.put("finalizing", finalizing);
    return request;
  }

  /**
   * Checks and completes the hook's children ({@link DesiredObjects}), adding the {@code controller-uid} label with
   * {@code generateSelector} and requiring labels that match the parent's selector (else they would be orphaned at
   * once).
   */
  private List<DesiredChild> desiredChildren(KubeObject parent, List<ObjectNode> objects,
      LabelSelector selector) {
    return desiredObjects.check(objects, childTypes, parent, parentResource, (metadata, description) -> {
      if (spec.generateSelector()) {
        ObjectNode labels = metadata.has("labels") && metadata.get("labels").isObject()
            ? (ObjectNode) metadata.get("labels") : metadata.putObject("labels");
        if (!labels.has(ChildSelector.CONTROLLER_UID_LABEL)) {
          labels.put(ChildSelector.CONTROLLER_UID_LABEL, parent.uid());
        }
      }
      if (!selector.matches(labelsOf(metadata))) {
        throw new HookResponseException("labels on desired child " + description
            + " don't match parent selector (" + selector + "); it would be orphaned at once");
      }
    });
  }

  private static Map<String, String> labelsOf(ObjectNode metadata) {
    JsonNode labels = metadata.get("labels");
    if (labels == null || !labels.isObject()) {
      return Map.of();
    }
    Map<String, String> result = new HashMap<>();
    labels.properties().forEach(label -> result.put(label.getKey(), label.getValue().asString()));
    return result;
  }

  /**
   * Replaces the parent's status when it differs from the cached one; completes with the parent as written (or as
   * given when nothing was written), or empty when the parent is gone.
   */
  private Mono<KubeObject> updateStatus(KubeObject parent, ObjectNode parentJson, ObjectNode hookStatus) {
    ObjectNode status = hookStatus == null ? NODES.objectNode() : hookStatus.deepCopy();
    status.put("observedGeneration", parent.generation());
    if (JsonEquality.equal(status, parentJson.get("status"))) {
      return Mono.just(parent);
    }
    // Replaces the whole status, as upstream's read-and-update does, in one request: the test of the UID keeps it
    // to this very parent (a re-created namesake answers 422), and without a resourceVersion precondition a spec
    // edit that lands meanwhile does not turn the write into a conflict and a second sync (that edit brings its
    // own sync, which writes the status of the newer generation).
    ArrayNode patch = NODES.arrayNode();
    patch.addObject().put("op", "test").put("path", "/metadata/uid").put("value", parent.uid());
    patch.addObject().put("op", "add").put("path", "/status").set("value", status);
    String body = KubeJson.text(patch);
    Mono<ApiWriter.Written> write = parentResource.hasStatusSubresource()
        ? api.patchStatus(parentResource, parent.namespace(), parent.name(), ApiWriter.PatchType.JSON, body)
        : api.patch(parentResource, parent.namespace(), parent.name(), ApiWriter.PatchType.JSON, body);
    // What follows (removing the finalizer) only needs the finalizers, which a status write does not change.
    return write.thenReturn(parent)
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 422, e -> Mono.empty())
        .onErrorMap(e -> ApiException.codeOf(e) != 409,
            e -> new IllegalStateException("can't update status: " + e.getMessage(), e));
  }

  private HookSpec.HookVersion versionOf(boolean finalizing) {
    Optional<HookSpec> hook = finalizing ? spec.finalizeHook() : spec.syncHook();
    return hook.map(HookSpec::version).orElse(HookSpec.HookVersion.V1);
  }

  private SyncResponse.UnknownFields unknownFields(boolean finalizing) {
    return (finalizing ? spec.finalizeHook() : spec.syncHook()).map(SyncResponse.UnknownFields::of)
        .orElse(SyncResponse.UnknownFields.LOOSE);
  }
}
