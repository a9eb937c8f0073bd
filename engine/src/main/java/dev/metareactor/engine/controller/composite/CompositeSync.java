package dev.metareactor.engine.controller.composite;

import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.api.DeleteParentAnnotation;
import dev.metareactor.engine.controller.Answer;
import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.Kind;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.OtherNamespaceChildren;
import dev.metareactor.engine.controller.ParentEvents;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.controller.Plan;
import dev.metareactor.engine.controller.StatusWriter;
import dev.metareactor.engine.controller.SyncedObject;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.rolling.RollingUpdate;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.AnswerField;
import dev.metareactor.engine.hook.AnswerFields;
import dev.metareactor.engine.hook.HookResponseException;
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
import java.util.function.Supplier;
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
 *   <li>the answer's children checked: every desired child of a declared type, in the parent's namespace (or in
 *       another one {@link CrossNamespaceChildren} allows, marked by {@link OtherNamespaceChildren}), with
 *       labels matching the parent's selector (the {@code controller-uid} label added with {@code generateSelector});
 *       </li>
 *   <li>with a rolling child rule, the rollout across ControllerRevisions ({@link RollingUpdate}): one hook call
 *       per live revision, one child moved at a time (a parent being deleted gets one call, without revisions);
 *       </li>
 *   <li>its own write: the status (the hook's, plus {@code observedGeneration}) replaces the parent's
 *       ({@link StatusWriter});</li>
 *   <li>its last: {@code deleteParent: true} in the answer (allowed by {@link DeleteParentAnnotation}, else the
 *       answer is refused whole) deletes the parent, UID-checked, once everything else is written, with a Normal
 *       Event {@code DeletedByHook}; a finalize hook still runs before it goes. Ignored for a parent already being
 *       deleted.</li>
 * </ul>
 */
final class CompositeSync implements Kind<ParentKey> {

  /** {@code deleteParent}: delete the parent once the rest of the answer is written. */
  static final AnswerField<Boolean> DELETE_PARENT = AnswerField.flag("deleteParent");
  /** The answer's fields a CompositeController reads itself, beyond every kind's. */
  private static final AnswerFields OWN_FIELDS = AnswerFields.of(DELETE_PARENT);

  /** A CompositeController's requests and answers: {@code parent}, {@code children}, {@code deleteParent}. */
  static final ObjectSync.Shape SHAPE = new ObjectSync.Shape("parent", "children", OWN_FIELDS.names(), true);

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final CompositeControllerSpec spec;
  private final SyncedResource parents;
  private final List<ChildType> childTypes;
  private final ChildClaimer claimer;
  private final DesiredObjects desiredObjects;
  private final StatusWriter statusWriter;
  private final @Nullable RollingUpdate rolling;
  private final ObjectApi api;
  private final ParentEvents events;
  private final boolean deleteParentAllowed;
  /** Whether a namespaced parent's children may be in other namespaces. */
  private final boolean otherNamespaces;

  /**
   * @param rolling the rollout across ControllerRevisions, {@code null} when no child rule rolls
   * @param events where the Event of a parent deleted at the hook's request goes
   * @param deleteParentAllowed whether answers may say {@code deleteParent: true} ({@link DeleteParentAnnotation})
   */
  CompositeSync(CompositeControllerSpec spec, SyncedResource parents, List<ChildType> childTypes,
      ChildClaimer claimer, ObjectApi api, @Nullable RollingUpdate rolling, ParentEvents events,
      boolean deleteParentAllowed) {
    this(spec, parents, childTypes, claimer, api, rolling, events, deleteParentAllowed, CrossNamespaceChildren.OFF);
  }

  /**
   * @param crossNamespace the other namespaces where a namespaced parent's children may be
   *     ({@link CrossNamespaceChildren})
   */
  CompositeSync(CompositeControllerSpec spec, SyncedResource parents, List<ChildType> childTypes,
      ChildClaimer claimer, ObjectApi api, @Nullable RollingUpdate rolling, ParentEvents events,
      boolean deleteParentAllowed, CrossNamespaceChildren crossNamespace) {
    this.rolling = rolling;
    this.api = Objects.requireNonNull(api, "api");
    this.events = Objects.requireNonNull(events, "events");
    this.deleteParentAllowed = deleteParentAllowed;
    this.spec = Objects.requireNonNull(spec, "spec");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.childTypes = List.copyOf(childTypes);
    this.claimer = Objects.requireNonNull(claimer, "claimer");
    this.statusWriter = new StatusWriter(api);
    this.otherNamespaces = crossNamespace.enabled() && parents.resource().namespaced();
    this.desiredObjects = new DesiredObjects("children", "parent",
        "spec.childResources of " + CompositeController.KIND + " " + spec.name(),
        // A cluster-scoped parent owns children in every namespace by ControllerRef already: nothing to allow.
        new OtherNamespaceChildren(otherNamespaces ? crossNamespace : CrossNamespaceChildren.OFF,
            CompositeController.KIND, spec.name()));
  }

  @Override
  public boolean ownsInOtherNamespaces() {
    return otherNamespaces;
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
        Mono.defer(() -> claimer.claim(parent, synced.resource(), selector, childTypes,
        otherNamespaces));
    RollingUpdate rollout = rolling;
    if (rollout == null || parent.deleting()) {
      return Plan.call(synced, children, Plan.Answering.checkedBy((response, body) -> {
        Supplier<Mono<Void>> deletion = parentDeletion(synced, body);
        return new Answer(desiredChildren(synced, response.children(), selector), Set.of(),
            () -> updateStatus(synced, json, response.status()), deletion);
      }));
    }
    return Plan.call(synced, children, (hook, observed) -> rollout.sync(synced, json, selector, observed, hook,
            reply -> {
              parentDeletion(synced, reply.body());
              return desiredChildren(synced, reply.response().children(), selector);
            })
        .map(step -> new Answer.Checked(step.response(), new Answer(step.desired(), Set.of(),
            () -> updateStatus(synced, json, step.response().status()), parentDeletion(synced, step.latestBody())))));
  }

  /**
   * The parent's deletion an answer asks for ({@code deleteParent: true}), or {@code null}: none asked, or the parent
   * is already being deleted.
   *
   * @throws HookResponseException when the field is not a boolean, or the controller does not allow it
   */
  private @Nullable Supplier<Mono<Void>> parentDeletion(SyncedObject synced, JsonNode body) {
    if (!OWN_FIELDS.read(body).get(DELETE_PARENT)) {
      return null;
    }
    if (!deleteParentAllowed) {
      throw new HookResponseException("deleteParent: true needs the annotation " + DeleteParentAnnotation.KEY
          + ": \"true\" on " + CompositeController.KIND + " " + spec.name() + "; nothing written");
    }
    KubeObject parent = synced.object();
    if (parent.deleting()) {
      return null;
    }
    return () -> api.delete(synced.resource(), parent.namespace(), parent.name(), parent.storedUid())
        .doOnSuccess(ignored -> events.record(parent, EventRecorder.Type.Normal, "DeletedByHook",
            "Deleted at the sync hook's request (deleteParent)"))
        // gone already, or replaced by a namesake the answer was not about: nothing to delete
        .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409, e -> Mono.empty());
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
