package dev.metareactor.engine.controller.composite;

import dev.metareactor.apply.JsonEquality;
import dev.metareactor.engine.api.CompositeControllerSpec;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.ChildrenManager;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.HookCaller;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiWriter;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * One sync of one parent of a CompositeController: read the parent and its children from the informer caches,
 * call the sync hook, converge the children, write the parent's status.
 *
 * <p>Reads come only from caches; the status write is skipped when the cached status already equals the new one,
 * so a steady-state resync makes no API call at all. Nothing of a malformed hook response is applied.
 */
final class CompositeSync {

  private static final Logger LOG = LoggerFactory.getLogger(CompositeSync.class);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final CompositeControllerSpec spec;
  private final JsonNode controllerObject;
  private final ApiResource parentResource;
  private final InformerLease parents;
  private final List<ChildType> childTypes;
  private final HookCaller syncHook;
  private final HookSpec.HookVersion hookVersion;
  private final ChildrenManager children;
  private final ApiWriter api;
  private final KubernetesSerialization json;
  private final Predicate<GenericKubernetesResource> responsible;

  CompositeSync(CompositeControllerSpec spec, JsonNode controllerObject, ApiResource parentResource,
      InformerLease parents, List<ChildType> childTypes, HookCaller syncHook, ChildrenManager children, ApiWriter api,
      KubernetesSerialization json, Predicate<GenericKubernetesResource> responsible) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.controllerObject = Objects.requireNonNull(controllerObject, "controllerObject");
    this.parentResource = Objects.requireNonNull(parentResource, "parentResource");
    this.parents = Objects.requireNonNull(parents, "parents");
    this.childTypes = List.copyOf(childTypes);
    this.syncHook = Objects.requireNonNull(syncHook, "syncHook");
    this.hookVersion = spec.syncHook().map(HookSpec::version).orElse(HookSpec.HookVersion.V1);
    this.children = Objects.requireNonNull(children, "children");
    this.api = Objects.requireNonNull(api, "api");
    this.json = Objects.requireNonNull(json, "json");
    this.responsible = Objects.requireNonNull(responsible, "responsible");
  }

  /** The parent as cached now, if it exists and this controller is responsible for it. */
  Optional<GenericKubernetesResource> parent(ParentKey key) {
    return parents.get(key.namespace(), key.name()).filter(responsible);
  }

  /**
   * Syncs the parent.
   *
   * @return when to sync again regardless of events (empty for never); fails when the hook failed or answered
   *     garbage, or a write failed
   */
  Mono<Optional<Duration>> sync(ParentKey key) {
    Optional<GenericKubernetesResource> found = parent(key);
    if (found.isEmpty()) {
      return Mono.just(Optional.empty());
    }
    GenericKubernetesResource parent = found.get();
    ObjectNode parentJson = json.convertValue(parent, ObjectNode.class);
    Map<ChildType, List<GenericKubernetesResource>> observed = observedChildren(parent);
    ObjectNode request = request(parentJson, observed);
    HookCaller.RootObject root = new HookCaller.RootObject(parent.getKind(),
        Objects.requireNonNullElse(parent.getMetadata().getNamespace(), ""), parent.getMetadata().getName());
    return syncHook.call(request, root)
        .map(body -> SyncResponse.parse(body, "children", unknownFields(),
            field -> LOG.debug("sync hook of {} answered unknown field {} for {}", spec.name(), field, key)))
        .flatMap(response -> apply(parent, parentJson, observed, response));
  }

  private Mono<Optional<Duration>> apply(GenericKubernetesResource parent, ObjectNode parentJson,
      Map<ChildType, List<GenericKubernetesResource>> observed, SyncResponse response) {
    List<DesiredChild> desired = desiredChildren(parent, response.children());
    Mono<Void> manage = parent.getMetadata().getDeletionTimestamp() == null
        ? children.manage(parent, observed, desired)
        : Mono.empty();
    // Status is written even when some child writes failed, as Metacontroller does; the failure is reported after.
    return manage.materialize()
        .flatMap(childSignal -> updateStatus(parent, parentJson, response.status())
            .then(childSignal.hasError() ? Mono.error(childSignal.getThrowable()) : Mono.empty()))
        .then(Mono.just(Optional.ofNullable(response.resyncAfter())));
  }

  private Map<ChildType, List<GenericKubernetesResource>> observedChildren(GenericKubernetesResource parent) {
    Map<ChildType, List<GenericKubernetesResource>> observed = new LinkedHashMap<>();
    String namespace = parent.getMetadata().getNamespace();
    for (ChildType type : childTypes) {
      List<GenericKubernetesResource> owned = new ArrayList<>();
      for (GenericKubernetesResource child : type.informer().controlledBy(parent.getMetadata().getUid())) {
        // A namespaced parent can only own children in its own namespace.
        if (!parentResource.namespaced() || Objects.equals(namespace, child.getMetadata().getNamespace())) {
          owned.add(child);
        }
      }
      observed.put(type, owned);
    }
    return observed;
  }

  private ObjectNode request(ObjectNode parentJson, Map<ChildType, List<GenericKubernetesResource>> observed) {
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set("parent", parentJson);
    ObjectNode childMap = request.putObject("children");
    observed.forEach((type, objects) -> {
      ObjectNode group = childMap.putObject(ObjectMapKeys.groupKey(type.resource().kind(), type.resource().apiVersion()));
      for (GenericKubernetesResource child : objects) {
        group.set(ObjectMapKeys.objectKey(hookVersion, parentResource.namespaced(), child.getMetadata().getNamespace(),
            child.getMetadata().getName()), json.convertValue(child, ObjectNode.class));
      }
    });
    request.putObject("related");
    request.put("finalizing", false);
    return request;
  }

  /** Checks and completes the hook's children: declared type, namespace, selector label. */
  private List<DesiredChild> desiredChildren(GenericKubernetesResource parent, List<ObjectNode> objects) {
    String parentNamespace = Objects.requireNonNullElse(parent.getMetadata().getNamespace(), "");
    List<DesiredChild> desired = new ArrayList<>(objects.size());
    for (int i = 0; i < objects.size(); i++) {
      ObjectNode child = objects.get(i).deepCopy();
      String apiVersion = child.get("apiVersion").stringValue();
      String kind = child.get("kind").stringValue();
      ChildType type = childTypes.stream().filter(t -> t.accepts(apiVersion, kind)).findFirst()
          .orElseThrow(() -> new HookResponseException("children: " + kind + " " + apiVersion
              + " is not declared in spec.childResources of CompositeController " + spec.name()));
      ObjectNode metadata = (ObjectNode) child.get("metadata");
      String namespace = metadata.path("namespace").asString("");
      if (type.resource().namespaced()) {
        if (namespace.isEmpty()) {
          metadata.put("namespace", parentNamespace);
        } else if (parentResource.namespaced() && !namespace.equals(parentNamespace)) {
          throw new HookResponseException("children: " + kind + " " + metadata.get("name").stringValue()
              + " is in namespace " + namespace + " but its parent is in " + parentNamespace
              + " (an owner must be in the same namespace as what it owns)");
        }
      } else if (!namespace.isEmpty()) {
        metadata.remove("namespace");
      } else if (parentResource.namespaced()) {
        throw new HookResponseException("children: cluster-scoped " + kind + " " + metadata.get("name").stringValue()
            + " cannot be owned by a namespaced parent");
      }
      if (spec.generateSelector()) {
        ObjectNode labels = metadata.has("labels") && metadata.get("labels").isObject()
            ? (ObjectNode) metadata.get("labels") : metadata.putObject("labels");
        if (!labels.has("controller-uid")) {
          labels.put("controller-uid", parent.getMetadata().getUid());
        }
      }
      desired.add(new DesiredChild(type, child));
    }
    return desired;
  }

  private Mono<Void> updateStatus(GenericKubernetesResource parent, ObjectNode parentJson, ObjectNode hookStatus) {
    ObjectNode status = hookStatus == null ? NODES.objectNode() : hookStatus.deepCopy();
    Long generation = parent.getMetadata().getGeneration();
    status.put("observedGeneration", generation == null ? 0L : generation);
    if (JsonEquality.equal(status, parentJson.get("status"))) {
      return Mono.empty();
    }
    ObjectNode updated = parentJson.deepCopy();
    updated.set("status", status);
    GenericKubernetesResource object = json.convertValue(updated, GenericKubernetesResource.class);
    Mono<GenericKubernetesResource> write = parentResource.hasStatusSubresource()
        ? api.updateStatus(parentResource, object)
        : api.update(parentResource, object);
    return write
        .onErrorResume(e -> e instanceof KubernetesClientException k && (k.getCode() == 404 || k.getCode() == 409),
            e -> Mono.empty())
        .onErrorMap(e -> new IllegalStateException("can't update status: " + e.getMessage(), e))
        .then();
  }

  private SyncResponse.UnknownFields unknownFields() {
    String mode = spec.syncHook().map(h -> h.webhook().path("responseUnMarshallMode").asString("")).orElse("");
    if (mode.equals("strict")) {
      return SyncResponse.UnknownFields.STRICT;
    }
    if (mode.equals("loose")) {
      return SyncResponse.UnknownFields.LOOSE;
    }
    return hookVersion == HookSpec.HookVersion.V2 ? SyncResponse.UnknownFields.STRICT : SyncResponse.UnknownFields.LOOSE;
  }
}
