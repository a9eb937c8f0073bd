package dev.metareactor.engine.controller.decorator;

import dev.metareactor.apply.JsonEquality;
import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.Finalizers;
import dev.metareactor.engine.controller.HookCaller;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * One sync of one target of a DecoratorController, in upstream's order:
 *
 * <ol>
 *   <li>the target from the cache (gone, or not this controller's: done); the finalizer added when the controller
 *       has a finalize hook, removed when it has none;</li>
 *   <li>its attachments: the objects it controls (owner index) that carry the annotation
 *       {@code metacontroller.k8s.io/decorator-controller: <name>}, never adopted; its related objects;</li>
 *   <li>the hook: {@code finalize} when the target is being deleted or no longer matches the selectors (opted out)
 *       and the controller has a finalize hook, else {@code sync}; request
 *       {@code {controller, object, attachments, related, finalizing}};</li>
 *   <li>the whole answer checked before anything is written ({@code labels} and {@code annotations}: strings or
 *       {@code null}; {@code status}: an object or {@code null}; attachments of declared types, in the target's
 *       namespace when it is namespaced, with a namespace when it is not);</li>
 *   <li>attachments converged (with the annotation added), unless the target is being deleted and not held by our
 *       finalizer or the garbage collector is working on it;</li>
 *   <li>the target's labels and annotations merged key by key ({@code null} removes one) and its status replaced
 *       ({@code null} leaves it), each written only when it differs;</li>
 *   <li>when finalizing and the hook answered {@code finalized: true}, the finalizer removed.</li>
 * </ol>
 */
final class DecoratorSync {

  /** The annotation on every attachment: which DecoratorController made it. */
  static final String DECORATOR_ANNOTATION = "metacontroller.k8s.io/decorator-controller";

  private static final Logger LOG = LoggerFactory.getLogger(DecoratorSync.class);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final Set<String> DECORATOR_FIELDS = Set.of("labels", "annotations");

  /** The hooks a DecoratorController may call; {@code null} where it has none. */
  record Hooks(HookCaller syncHook, HookCaller finalizeHook) {}

  private final DecoratorControllerSpec spec;
  private final JsonNode controllerObject;
  private final Map<ApiResource, TargetType> targets;
  private final List<ChildType> attachmentTypes;
  private final Hooks hooks;
  private final RelatedObjects<TargetKey> related;
  private final ChildrenManager attachments;
  private final Finalizers finalizers;
  private final ApiWriter api;
  private final DecoratorRouter router;
  private final DesiredObjects desiredObjects;

  DecoratorSync(DecoratorControllerSpec spec, JsonNode controllerObject, List<TargetType> targets,
      List<ChildType> attachmentTypes, Hooks hooks, RelatedObjects<TargetKey> related, ChildrenManager attachments,
      Finalizers finalizers, ApiWriter api, DecoratorRouter router) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.controllerObject = Objects.requireNonNull(controllerObject, "controllerObject");
    this.targets = new LinkedHashMap<>();
    targets.forEach(type -> this.targets.put(type.resource(), type));
    this.attachmentTypes = List.copyOf(attachmentTypes);
    this.hooks = Objects.requireNonNull(hooks, "hooks");
    this.related = Objects.requireNonNull(related, "related");
    this.attachments = Objects.requireNonNull(attachments, "attachments");
    this.finalizers = Objects.requireNonNull(finalizers, "finalizers");
    this.api = Objects.requireNonNull(api, "api");
    this.router = Objects.requireNonNull(router, "router");
    this.desiredObjects = new DesiredObjects("attachments", "target",
        "spec.attachments of DecoratorController " + spec.name());
  }

  /** The target as cached now, if it exists and this controller is responsible for it. */
  Optional<KubeObject> target(TargetKey key) {
    TargetType type = targets.get(key.resource());
    return type == null ? Optional.empty()
        : type.informer().get(key.namespace(), key.name()).filter(target -> router.responsibleFor(type, target));
  }

  Mono<Optional<Duration>> sync(TargetKey key) {
    Optional<KubeObject> found = target(key);
    if (found.isEmpty()) {
      return Mono.just(Optional.empty());
    }
    TargetType type = targets.get(key.resource());
    return syncFinalizer(type, found.get())
        .filter(target -> router.responsibleFor(type, target))
        .flatMap(target -> syncTarget(key, type, target))
        .defaultIfEmpty(Optional.empty());
  }

  private Mono<KubeObject> syncFinalizer(TargetType type, KubeObject target) {
    if (hooks.finalizeHook() == null) {
      return finalizers.remove(type.resource(), target);
    }
    if (!target.deleting() && DecoratorRouter.selected(type, target)) {
      return finalizers.add(type.resource(), target);
    }
    return Mono.just(target);
  }

  private Mono<Optional<Duration>> syncTarget(TargetKey key, TargetType type, KubeObject target) {
    boolean finalizing = hooks.finalizeHook() != null
        && (target.deleting() || !DecoratorRouter.selected(type, target));
    HookCaller hook = finalizing ? hooks.finalizeHook() : hooks.syncHook();
    if (hook == null) {
      return Mono.error(new IllegalStateException("sync hook not defined for DecoratorController " + spec.name()));
    }
    ObjectNode targetJson = target.toTree();
    Map<ChildType, List<KubeObject>> observed = observedAttachments(type, target);
    HookCaller.RootObject root = new HookCaller.RootObject(target.kind(), key.namespace(), key.name());
    HookSpec.HookVersion version = versionOf(finalizing);
    return related.of(key, target, targetJson, type.resource(), version)
        .flatMap(relatedObjects -> hook.call(request(type, targetJson, observed, relatedObjects, finalizing, version),
            root))
        .flatMap(body -> {
          SyncResponse response = SyncResponse.parse(body, "attachments", DECORATOR_FIELDS, unknownFields(finalizing),
              field -> LOG.debug("DecoratorController {}: hook answered unknown field {} for {}", spec.name(),
                  field, key));
          Map<String, String> labels = stringMap(body.get("labels"), "labels");
          Map<String, String> annotations = stringMap(body.get("annotations"), "annotations");
          List<DesiredChild> desired = desiredAttachments(type, target, response.children());
          return apply(type, target, targetJson, observed, desired, labels, annotations, response, finalizing);
        });
  }

  /** What the target controls and this decorator made: owner index, then the annotation; no scan, no adoption. */
  private Map<ChildType, List<KubeObject>> observedAttachments(TargetType type, KubeObject target) {
    Map<ChildType, List<KubeObject>> observed = new LinkedHashMap<>();
    for (ChildType attachmentType : attachmentTypes) {
      List<KubeObject> mine = new ArrayList<>();
      for (KubeObject attachment : attachmentType.informer().controlledBy(target.uid())) {
        boolean ours = spec.name().equals(attachment.annotations().get(DECORATOR_ANNOTATION));
        boolean inScope = !type.resource().namespaced() || target.namespace().equals(attachment.namespace());
        if (ours && inScope) {
          mine.add(attachment);
        }
      }
      observed.put(attachmentType, mine);
    }
    return observed;
  }

  private ObjectNode request(TargetType type, ObjectNode targetJson,
      Map<ChildType, List<KubeObject>> observed, ObjectNode relatedObjects, boolean finalizing,
      HookSpec.HookVersion version) {
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set("object", targetJson);
    ObjectNode map = request.putObject("attachments");
    observed.forEach((attachmentType, objects) -> {
      ObjectNode group = map.putObject(ObjectMapKeys.groupKey(attachmentType.resource().kind(),
          attachmentType.resource().apiVersion()));
      for (KubeObject attachment : objects) {
        group.putRawValue(ObjectMapKeys.objectKey(version, type.resource().namespaced(), attachment.namespace(),
            attachment.name()), attachment.raw());
      }
    });
    request.set("related", relatedObjects);
    request.put("finalizing", finalizing);
    return request;
  }

  /** {@code labels} or {@code annotations}: an object of strings, {@code null} for "remove this key". */
  private static Map<String, String> stringMap(JsonNode node, String field) {
    Map<String, String> values = new LinkedHashMap<>();
    if (node == null || node.isNull()) {
      return values;
    }
    if (!node.isObject()) {
      throw new HookResponseException(field + " must be an object of strings, got " + node.getNodeType());
    }
    for (Map.Entry<String, JsonNode> entry : node.properties()) {
      JsonNode value = entry.getValue();
      if (!value.isNull() && !value.isString()) {
        throw new HookResponseException(field + "." + entry.getKey() + " must be a string or null");
      }
      values.put(entry.getKey(), value.isNull() ? null : value.stringValue());
    }
    return values;
  }

  /** Checks and completes the hook's attachments ({@link DesiredObjects}), marking each as this decorator's. */
  private List<DesiredChild> desiredAttachments(TargetType type, KubeObject target,
      List<ObjectNode> objects) {
    return desiredObjects.check(objects, attachmentTypes, target, type.resource(), (metadata, description) -> {
      ObjectNode notes = metadata.has("annotations") && metadata.get("annotations").isObject()
          ? (ObjectNode) metadata.get("annotations") : metadata.putObject("annotations");
      notes.put(DECORATOR_ANNOTATION, spec.name());
    });
  }

  private Mono<Optional<Duration>> apply(TargetType type, KubeObject target, ObjectNode targetJson,
      Map<ChildType, List<KubeObject>> observed, List<DesiredChild> desired, Map<String, String> labels,
      Map<String, String> annotations, SyncResponse response, boolean finalizing) {
    boolean deleting = target.deleting();
    boolean finalized = finalizing && response.finalized();
    boolean manage = !finalized
        && (!deleting || (hooks.finalizeHook() != null && finalizers.mayManageChildrenWhileDeleting(target)));
    Mono<Void> converge = manage ? attachments.manage(target, observed, desired) : Mono.empty();
    // The target's own changes are written even when some attachment writes failed; the failure is reported after.
    return converge.materialize()
        .flatMap(signal -> updateMetadata(type, target, labels, annotations)
            .then(updateStatus(type, target, targetJson, response.status()))
            .then(finalized ? finalizers.remove(type.resource(), latest(type, target)).then() : Mono.<Void>empty())
            .then(signal.hasError() ? Mono.error(signal.getThrowable()) : Mono.empty()))
        .then(Mono.just(Optional.ofNullable(response.resyncAfter())));
  }

  /** The finalizer removal tests our name at its index, so the newest cached copy is good enough. */
  private static KubeObject latest(TargetType type, KubeObject target) {
    return type.informer().get(target.namespace(), target.name()).orElse(target);
  }

  /** Labels and annotations the hook set or removed, as one merge patch of only the keys that change. */
  private Mono<Void> updateMetadata(TargetType type, KubeObject target, Map<String, String> labels,
      Map<String, String> annotations) {
    Map<String, Object> metadata = new LinkedHashMap<>();
    changes(target.labels(), labels).ifPresent(change -> metadata.put("labels", change));
    changes(target.annotations(), annotations).ifPresent(change -> metadata.put("annotations", change));
    if (metadata.isEmpty()) {
      return Mono.empty();
    }
    // No resourceVersion: the patch only touches these keys, so a concurrent change elsewhere cannot conflict.
    return api.mergePatch(type.resource(), target.namespace(), target.name(),
            KubeJson.mapper().writeValueAsString(Map.of("metadata", metadata)))
        .onErrorResume(e -> status(e) == 404, e -> Mono.empty())
        .onErrorMap(e -> new IllegalStateException("can't update labels and annotations: " + e.getMessage(), e))
        .then();
  }

  private static Optional<Map<String, String>> changes(Map<String, String> current, Map<String, String> wanted) {
    Map<String, String> existing = current == null ? Map.of() : current;
    Map<String, String> change = new LinkedHashMap<>();
    wanted.forEach((key, value) -> {
      if (value == null ? existing.containsKey(key) : !value.equals(existing.get(key))) {
        change.put(key, value);
      }
    });
    return change.isEmpty() ? Optional.empty() : Optional.of(change);
  }

  /** The hook's status replaces the target's, when it gave one and it differs (no observedGeneration here). */
  private Mono<Void> updateStatus(TargetType type, KubeObject target, ObjectNode targetJson,
      ObjectNode status) {
    if (status == null || JsonEquality.equal(status, targetJson.get("status"))) {
      return Mono.empty();
    }
    ArrayNode operations = KubeJson.nodes().arrayNode();
    operations.addObject().put("op", "add").put("path", "/status").set("value", status);
    String patch = KubeJson.text(operations);
    Mono<ApiWriter.Written> write = type.resource().hasStatusSubresource()
        ? api.patchStatus(type.resource(), target.namespace(), target.name(), ApiWriter.PatchType.JSON, patch)
        : api.patch(type.resource(), target.namespace(), target.name(), ApiWriter.PatchType.JSON, patch);
    return write
        .onErrorResume(e -> status(e) == 404, e -> Mono.empty())
        .onErrorMap(e -> new IllegalStateException("can't update status: " + e.getMessage(), e))
        .then();
  }

  private static int status(Throwable e) {
    return ApiException.codeOf(e);
  }

  private HookSpec.HookVersion versionOf(boolean finalizing) {
    return (finalizing ? spec.finalizeHook() : spec.syncHook()).map(HookSpec::version).orElse(HookSpec.HookVersion.V1);
  }

  private SyncResponse.UnknownFields unknownFields(boolean finalizing) {
    return (finalizing ? spec.finalizeHook() : spec.syncHook()).map(SyncResponse.UnknownFields::of)
        .orElse(SyncResponse.UnknownFields.LOOSE);
  }
}
