package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.SyncedObject;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.WrittenStatus;
import dev.metareactor.engine.controller.rolling.RollingUpdate;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.selector.LabelSelector;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a CompositeController brings to the sync of a parent ({@link ObjectSync} runs the rest):
 *
 * <ul>
 *   <li>the parent's children: its child selector ({@code spec.selector}, or {@code controller-uid} with
 *       {@code generateSelector}) and the claim ({@link ChildClaimer}: adopt matching orphans, release what no longer
 *       matches);</li>
 *   <li>the answer's children checked: every desired child of a declared type, in the parent's namespace, with
 *       labels matching the parent's selector (the {@code controller-uid} label added with {@code generateSelector});
 *       </li>
 *   <li>with a rolling child rule, the rollout across ControllerRevisions ({@link RollingUpdate}): one hook call
 *       per live revision, one child moved at a time (a parent being deleted gets one call, without revisions);
 *       </li>
 *   <li>its own write: the status (the hook's, plus {@code observedGeneration}) replaces the parent's, written only
 *       when it differs from the cached one.</li>
 * </ul>
 */
final class CompositeSync implements ObjectSync.Kind<ParentKey> {

  /** A CompositeController's requests and answers: {@code parent}, {@code children}. */
  static final ObjectSync.Shape SHAPE = new ObjectSync.Shape("parent", "children", Set.of(), true);

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final CompositeControllerSpec spec;
  private final SyncedResource parents;
  private final List<ChildType> childTypes;
  private final ChildClaimer claimer;
  private final ObjectApi api;
  private final DesiredObjects desiredObjects;
  private final WrittenStatus writtenStatus = new WrittenStatus();
  private final @Nullable RollingUpdate rolling;

  /** @param rolling the rollout across ControllerRevisions, {@code null} when no child rule rolls */
  CompositeSync(CompositeControllerSpec spec, SyncedResource parents, List<ChildType> childTypes,
      ChildClaimer claimer, ObjectApi api, @Nullable RollingUpdate rolling) {
    this.rolling = rolling;
    this.spec = Objects.requireNonNull(spec, "spec");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.childTypes = List.copyOf(childTypes);
    this.claimer = Objects.requireNonNull(claimer, "claimer");
    this.api = Objects.requireNonNull(api, "api");
    this.desiredObjects = new DesiredObjects("children", "parent",
        "spec.childResources of " + CompositeController.KIND + " " + spec.name());
  }

  @Override
  public List<SyncedResource> resources() {
    return List.of(parents);
  }

  @Override
  public Optional<SyncedResource> resourceOf(ParentKey key) {
    return Optional.of(parents);
  }

  @Override
  public List<ParentKey> keysOf(SyncedResource type, KubeObject parent) {
    return List.of(CompositeRouter.keyOf(type.resource(), parent));
  }

  @Override
  public ObjectSync.Plan plan(ParentKey key, SyncedObject synced, ObjectNode json) {
    KubeObject parent = synced.object();
    LabelSelector selector = ChildSelector.of(parent, json, spec.generateSelector());
    return new ObjectSync.Plan() {
      @Override
      public Mono<Map<ChildType, List<KubeObject>>> owned() {
        return claimer.claim(parent, synced.resource(), selector, childTypes);
      }

      @Override
      public ObjectSync.Answer check(SyncResponse response, JsonNode body) {
        return new ObjectSync.Answer(desiredChildren(synced, response.children(), selector),
            () -> updateStatus(synced, json, response.status()));
      }

      @Override
      public Mono<ObjectSync.Checked> answer(ObjectSync.HookCall hook, Map<ChildType, List<KubeObject>> observed) {
        RollingUpdate rollout = rolling;
        if (rollout == null || parent.deleting()) {
          return ObjectSync.Plan.super.answer(hook, observed);
        }
        return rollout.sync(synced, json, selector, observed, hook,
                response -> desiredChildren(synced, response.children(), selector))
            .map(step -> new ObjectSync.Checked(step.response(), new ObjectSync.Answer(step.desired(),
                () -> updateStatus(synced, json, step.response().status()))));
      }
    };
  }

  /**
   * Checks and completes the hook's children ({@link DesiredObjects}), setting the {@code controller-uid} label with
   * {@code generateSelector} (the engine's value, whatever the hook's) and requiring labels that match the parent's
   * selector (else they would be orphaned at once).
   */
  private List<DesiredChild> desiredChildren(SyncedObject synced, List<ObjectNode> objects, LabelSelector selector) {
    KubeObject parent = synced.object();
    return desiredObjects.check(objects, childTypes, parent, synced.resource(), (metadata, description) -> {
      if (spec.generateSelector()) {
        desiredObjects.setEngineKey(metadata, "labels", ChildSelector.CONTROLLER_UID_LABEL, parent.storedUid(),
            description);
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
   * Replaces the parent's status when it differs from the cached one; completes with whether the parent is still
   * there (not gone, not re-created under its name).
   */
  private Mono<Boolean> updateStatus(SyncedObject synced, ObjectNode parentJson, @Nullable ObjectNode hookStatus) {
    KubeObject parent = synced.object();
    ObjectNode status = hookStatus == null ? NODES.objectNode() : hookStatus.deepCopy();
    status.put("observedGeneration", parent.generation());
    if (!writtenStatus.needsWriting(parent, parentJson.get("status"), status)) {
      return Mono.just(true);
    }
    // Replaces the whole status, as upstream's read-and-update does, in one request: the test of the UID keeps it
    // to this very parent (a re-created namesake answers 422), and without a resourceVersion precondition a spec
    // edit that lands meanwhile does not turn the write into a conflict and a second sync (that edit brings its
    // own sync, which writes the status of the newer generation).
    ArrayNode patch = NODES.arrayNode();
    patch.addObject().put("op", "test").put("path", "/metadata/uid").put("value", parent.uid());
    patch.addObject().put("op", "add").put("path", "/status").set("value", status);
    Mono<ObjectApi.Written> write = synced.resource().hasStatusSubresource()
        ? api.patchStatus(synced.resource(), parent.namespace(), parent.name(), ObjectApi.PatchType.JSON, patch)
        : api.patch(synced.resource(), parent.namespace(), parent.name(), ObjectApi.PatchType.JSON, patch);
    return write.doOnNext(done -> writtenStatus.wrote(parent, status)).thenReturn(true)
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 422, e -> Mono.just(false))
        .onErrorMap(e -> ApiException.codeOf(e) != 409,
            e -> new IllegalStateException("can't update status: " + e.getMessage(), e));
  }
}
