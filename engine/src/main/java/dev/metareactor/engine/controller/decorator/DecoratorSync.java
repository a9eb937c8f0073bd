package dev.metareactor.engine.controller.decorator;

import dev.metareactor.engine.api.DecoratorControllerSpec;
import dev.metareactor.engine.controller.Answer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.DesiredObjects;
import dev.metareactor.engine.controller.Kind;
import dev.metareactor.engine.controller.ObjectSync;
import dev.metareactor.engine.controller.Plan;
import dev.metareactor.engine.controller.SameObject;
import dev.metareactor.engine.controller.StatusWriter;
import dev.metareactor.engine.controller.SyncedObject;
import dev.metareactor.engine.controller.SyncedResource;
import dev.metareactor.engine.controller.decorator.DecoratorRouter.TargetType;
import dev.metareactor.engine.hook.AnswerField;
import dev.metareactor.engine.hook.AnswerFields;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What a DecoratorController brings to the sync of a target ({@link ObjectSync} runs the rest):
 *
 * <ul>
 *   <li>its attachments: the objects it controls (owner index) that carry the annotation
 *       {@code metacontroller.k8s.io/decorator-controller: <name>}, never adopted;</li>
 *   <li>the answer checked whole: {@code labels} and {@code annotations} strings or {@code null}, attachments of
 *       declared types, in the target's namespace when it is namespaced, with a namespace when it is not (each
 *       marked with the annotation);</li>
 *   <li>its own writes: the target's labels and annotations merged key by key ({@code null} removes one), written
 *       only when they differ, and its status replaced ({@link StatusWriter}; {@code null} leaves it).</li>
 * </ul>
 */
final class DecoratorSync implements Kind<TargetKey> {

  /** The annotation on every attachment: which DecoratorController made it. */
  static final String DECORATOR_ANNOTATION = "metacontroller.k8s.io/decorator-controller";

  /** {@code labels}: the target's labels to set, a {@code null} value removing one. */
  private static final AnswerField<Map<String, String>> LABELS =
      new AnswerField<>("labels", labels -> stringMap(labels, "labels"));
  /** {@code annotations}: the target's annotations to set, a {@code null} value removing one. */
  private static final AnswerField<Map<String, String>> ANNOTATIONS =
      new AnswerField<>("annotations", annotations -> stringMap(annotations, "annotations"));
  /** The answer's fields a DecoratorController reads itself, beyond every kind's. */
  private static final AnswerFields OWN_FIELDS = AnswerFields.of(LABELS, ANNOTATIONS);

  /** A DecoratorController's requests and answers: {@code object}, {@code attachments}, {@code labels}... */
  static final ObjectSync.Shape SHAPE = new ObjectSync.Shape("object", "attachments", OWN_FIELDS.names(), true);

  private final DecoratorControllerSpec spec;
  private final Map<ApiResource, TargetType> targets;
  private final List<ChildType> attachmentTypes;
  private final ObjectApi api;
  private final DesiredObjects desiredObjects;
  private final StatusWriter statusWriter;

  DecoratorSync(DecoratorControllerSpec spec, List<TargetType> targets, List<ChildType> attachmentTypes,
      ObjectApi api) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.targets = new LinkedHashMap<>();
    targets.forEach(type -> this.targets.put(type.resource(), type));
    this.attachmentTypes = List.copyOf(attachmentTypes);
    this.api = Objects.requireNonNull(api, "api");
    this.statusWriter = new StatusWriter(api);
    this.desiredObjects = new DesiredObjects("attachments", "target",
        "spec.attachments of DecoratorController " + spec.name());
  }

  @Override
  public List<SyncedResource> resources() {
    return targets.values().stream().map(TargetType::synced).toList();
  }

  @Override
  public Optional<SyncedResource> resourceOf(TargetKey key) {
    return Optional.ofNullable(targets.get(key.resource())).map(TargetType::synced);
  }

  @Override
  public List<TargetKey> keysOf(SyncedResource type, KubeObject target) {
    return List.of(DecoratorRouter.keyOf(type.resource(), target));
  }

  @Override
  public Plan plan(TargetKey key, SyncedObject synced, ObjectNode json) {
    TargetType type = Objects.requireNonNull(targets.get(synced.resource()), "one of the target resources");
    return Plan.call(synced, Mono.fromSupplier(() -> observedAttachments(type, synced.object())),
        Plan.Answering.checkedBy((response, body) -> {
          AnswerFields.Values own = OWN_FIELDS.read(body);
          Map<String, String> labels = own.get(LABELS);
          Map<String, String> annotations = own.get(ANNOTATIONS);
          desiredObjects.dropEngineKeys(labels, "labels", synced.object().describe());
          desiredObjects.dropEngineKeys(annotations, "annotations", synced.object().describe());
          List<DesiredChild> desired = desiredAttachments(synced, response.children());
          return new Answer(desired, () -> updateMetadata(synced, labels, annotations)
              .flatMap(there -> there ? updateStatus(synced, json, response.status()) : Mono.just(false)));
        }));
  }

  /** What the target controls and this decorator made: owner index, then the annotation; no scan, no adoption. */
  private Map<ChildType, List<KubeObject>> observedAttachments(TargetType type, KubeObject target) {
    Map<ChildType, List<KubeObject>> observed = new LinkedHashMap<>();
    for (ChildType attachmentType : attachmentTypes) {
      List<KubeObject> mine = new ArrayList<>();
      for (KubeObject attachment : attachmentType.informer().controlledBy(target.storedUid())) {
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

  /** {@code labels} or {@code annotations}: an object of strings, {@code null} for "remove this key". */
  private static Map<String, String> stringMap(@Nullable JsonNode node, String field) {
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
  private List<DesiredChild> desiredAttachments(SyncedObject synced, List<ObjectNode> objects) {
    return desiredObjects.check(objects, attachmentTypes, synced.object(), synced.resource(),
        (metadata, description) -> desiredObjects.setEngineKey(metadata, "annotations", DECORATOR_ANNOTATION,
            spec.name(), description));
  }

  /**
   * Labels and annotations the hook set or removed, as one merge patch of only the keys that change; completes with
   * whether the target is still there ({@code false}: gone, or a namesake under its name, which nothing more is
   * written to; its own event syncs it). A conflict fails as it is, so that the target is synced again.
   */
  private Mono<Boolean> updateMetadata(SyncedObject synced, Map<String, String> labels,
      Map<String, String> annotations) {
    KubeObject target = synced.object();
    Map<String, Object> metadata = new LinkedHashMap<>();
    changes(target.labels(), labels).ifPresent(change -> metadata.put("labels", change));
    changes(target.annotations(), annotations).ifPresent(change -> metadata.put("annotations", change));
    if (metadata.isEmpty()) {
      return Mono.just(true);
    }
    // The UID guards the write: the hook's labels are for the target it was shown, never for a namesake created
    // since (the API server refuses a different metadata.uid with 422, the field being immutable; SameObject tells
    // that from a refusal of the labels themselves). No resourceVersion: the patch only touches these keys, so a
    // concurrent change elsewhere cannot conflict.
    metadata.put("uid", target.uid());
    return api.mergePatch(synced.resource(), target.namespace(), target.name(),
            KubeJson.mapper().valueToTree(Map.of("metadata", metadata)))
        .thenReturn(true)
        .onErrorResume(refused -> switch (ApiException.codeOf(refused)) {
          case 404 -> Mono.just(false);
          case 409 -> Mono.error(refused);
          case 422 -> SameObject.stillThere(api, synced.resource(), target)
              .onErrorMap(unread -> metadataRefused(refused))
              .flatMap(there -> there ? Mono.error(metadataRefused(refused)) : Mono.just(false));
          default -> Mono.error(metadataRefused(refused));
        });
  }

  private static IllegalStateException metadataRefused(Throwable cause) {
    return new IllegalStateException("can't update labels and annotations: " + cause.getMessage(), cause);
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

  /** The hook's status replaces the target's ({@link StatusWriter}); {@code null} leaves it, no observedGeneration. */
  private Mono<Boolean> updateStatus(SyncedObject synced, ObjectNode targetJson, @Nullable ObjectNode status) {
    return status == null ? Mono.just(true)
        : statusWriter.write(synced.resource(), synced.object(), targetJson.get("status"), status);
  }
}
