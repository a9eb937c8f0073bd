package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.controller.Answer;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.Kind;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.Plan;
import dev.metareactor.engine.controller.StatusWriter;
import dev.metareactor.engine.controller.SyncedObject;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.rolling.RollingUpdate;
import dev.metareactor.engine.hook.HookResponseException;
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
 *   <li>its own write: the status (the hook's, plus {@code observedGeneration}) replaces the parent's
 *       ({@link StatusWriter}).</li>
 * </ul>
 */
final class CompositeSync implements Kind<ParentKey> {

  /** A CompositeController's requests and answers: {@code parent}, {@code children}. */
  static final ObjectSync.Shape SHAPE = new ObjectSync.Shape("parent", "children", Set.of(), true);

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final CompositeControllerSpec spec;
  private final SyncedResource parents;
  private final List<ChildType> childTypes;
  private final ChildClaimer claimer;
  private final DesiredObjects desiredObjects;
  private final StatusWriter statusWriter;
  private final @Nullable RollingUpdate rolling;

  /** @param rolling the rollout across ControllerRevisions, {@code null} when no child rule rolls */
  CompositeSync(CompositeControllerSpec spec, SyncedResource parents, List<ChildType> childTypes,
      ChildClaimer claimer, ObjectApi api, @Nullable RollingUpdate rolling) {
    this.rolling = rolling;
    this.spec = Objects.requireNonNull(spec, "spec");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.childTypes = List.copyOf(childTypes);
    this.claimer = Objects.requireNonNull(claimer, "claimer");
    this.statusWriter = new StatusWriter(api);
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
  public Plan plan(ParentKey key, SyncedObject synced, ObjectNode json) {
    KubeObject parent = synced.object();
    LabelSelector selector = ChildSelector.of(parent, json, spec.generateSelector());
    Mono<Map<ChildType, List<KubeObject>>> children =
        Mono.defer(() -> claimer.claim(parent, synced.resource(), selector, childTypes));
    RollingUpdate rollout = rolling;
    if (rollout == null || parent.deleting()) {
      return Plan.call(synced, children, Plan.Answering.checkedBy((response, body) ->
          new Answer(desiredChildren(synced, response.children(), selector),
              () -> updateStatus(synced, json, response.status()))));
    }
    return Plan.call(synced, children, (hook, observed) -> rollout.sync(synced, json, selector, observed, hook,
            response -> desiredChildren(synced, response.children(), selector))
        .map(step -> new Answer.Checked(step.response(), new Answer(step.desired(),
            () -> updateStatus(synced, json, step.response().status())))));
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

  /** The hook's status, plus {@code observedGeneration}, replaces the parent's ({@link StatusWriter}). */
  private Mono<Boolean> updateStatus(SyncedObject synced, ObjectNode parentJson, @Nullable ObjectNode hookStatus) {
    ObjectNode status = hookStatus == null ? NODES.objectNode() : hookStatus.deepCopy();
    status.put("observedGeneration", synced.object().generation());
    return statusWriter.write(synced.resource(), synced.object(), parentJson.get("status"), status);
  }
}
