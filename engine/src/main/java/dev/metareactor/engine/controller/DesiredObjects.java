package dev.metareactor.engine.controller;

import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectNames;
import dev.metareactor.engine.shard.ShardKeys;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Checks and completes what a hook asked for ({@code children}, {@code attachments}, {@code outputs}) before anything
 * is written: each object of a declared type; a namespaced object in its owner's namespace (filled in when absent;
 * required when the owner is cluster-scoped), or in another one the controller allows ({@link
 * OtherNamespaceChildren}, marked there as its owner's); a cluster-scoped object never owned by a namespaced owner;
 * its name and namespace as the API server would take them for its resource ({@link ObjectNames}); owner references
 * that leave its owner its controller; no two objects with the same type and name. Any problem rejects the whole answer
 * with a {@link HookResponseException} naming it, so nothing of it is written (a rename to a name the server refuses
 * does not delete the old object first).
 *
 * <p>Labels and annotations are the engine's where it writes them itself: the hook's under
 * {@code shard.metareactor.dev/} are dropped, and those a kind sets ({@link #setEngineKey}) take the engine's value;
 * either with a log line (at info the first time per key, then at debug). Thread-safe.
 */
public final class DesiredObjects {

  private static final Logger LOG = LoggerFactory.getLogger(DesiredObjects.class);
  /** How many ignored keys are remembered as logged at info. */
  private static final int MAX_TOLD = 64;
  private static final String ENGINE_PREFIX = ShardKeys.PREFIX + " is the engine's own prefix";
  /** The fields of an owner reference that Kubernetes' validation requires. */
  private static final List<String> REQUIRED_IN_OWNER_REFERENCES = List.of("apiVersion", "kind", "name", "uid");
  private static final List<String> OWNER_REFERENCE_FLAGS = List.of("controller", "blockOwnerDeletion");

  private final String field;
  private final String ownerRole;
  private final String declaredIn;
  private final OtherNamespaceChildren otherNamespaces;
  /** The keys whose ignoring was logged at info. */
  private final Set<String> told = ConcurrentHashMap.newKeySet();

  /** What a kind of controller adds to or checks on each desired object once its namespace is settled. */
  @FunctionalInterface
  public interface Completion {
    /**
     * @param metadata the object's metadata, to change in place
     * @param description {@code Kind namespace/name}, for messages
     * @throws HookResponseException to reject the answer
     */
    void complete(ObjectNode metadata, String description);
  }

  /**
   * @param field the answer's field, {@code children}, {@code attachments} or {@code outputs}
   * @param ownerRole how messages call the owner, {@code parent} or {@code target}
   * @param declaredIn where the types are declared, for messages ({@code spec.childResources of CompositeController
   *     x})
   */
  public DesiredObjects(String field, String ownerRole, String declaredIn) {
    this(field, ownerRole, declaredIn, OtherNamespaceChildren.OFF);
  }

  /**
   * The same for a controller whose namespaced owners may have objects in other namespaces: those it allows are
   * accepted and marked as the owner's ({@link OtherNamespaceChildren}).
   */
  public DesiredObjects(String field, String ownerRole, String declaredIn, OtherNamespaceChildren otherNamespaces) {
    this.field = Objects.requireNonNull(field, "field");
    this.ownerRole = Objects.requireNonNull(ownerRole, "ownerRole");
    this.declaredIn = Objects.requireNonNull(declaredIn, "declaredIn");
    this.otherNamespaces = Objects.requireNonNull(otherNamespaces, "otherNamespaces");
  }

  /**
   * @param objects the answer's objects, already checked for {@code apiVersion}, {@code kind} and a name
   * @param types the declared types
   * @param owner the parent or target
   * @param ownerResource its resource
   */
  public List<DesiredChild> check(List<ObjectNode> objects, List<ChildType> types, KubeObject owner,
      ApiResource ownerResource, Completion completion) {
    String ownerNamespace = owner.namespace();
    List<DesiredChild> desired = new ArrayList<>(objects.size());
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < objects.size(); i++) {
      ObjectNode object = objects.get(i).deepCopy();
      String apiVersion = object.get("apiVersion").stringValue();
      String kind = object.get("kind").stringValue();
      ChildType type = types.stream().filter(t -> t.accepts(apiVersion, kind)).findFirst()
          .orElseThrow(() -> new HookResponseException(field + ": " + kind + " " + apiVersion
              + " is not declared in " + declaredIn));
      ObjectNode metadata = (ObjectNode) object.get("metadata");
      String name = metadata.get("name").stringValue();
      String namespace = metadata.path("namespace").asString("");
      if (type.resource().namespaced()) {
        if (namespace.isEmpty()) {
          if (!ownerResource.namespaced()) {
            throw new HookResponseException(field + ": " + kind + " " + name + " has no metadata.namespace (its "
                + ownerRole + " is cluster-scoped, so the namespace cannot be inferred)");
          }
          metadata.put("namespace", ownerNamespace);
          namespace = ownerNamespace;
        } else if (ownerResource.namespaced() && !namespace.equals(ownerNamespace)) {
          otherNamespaces.check(type, namespace, ownerNamespace, ownerRole, field + ": " + kind + " " + name);
        }
      } else if (!namespace.isEmpty()) {
        metadata.remove("namespace");
        namespace = "";
      } else if (ownerResource.namespaced()) {
        throw new HookResponseException(field + ": cluster-scoped " + kind + " " + name
            + " cannot be owned by a namespaced " + ownerRole);
      }
      String description = kind + " " + KubeObject.namespacedName(namespace, name);
      Optional<String> badName = ObjectNames.problem(type.resource(), namespace, name);
      if (badName.isPresent()) {
        throw new HookResponseException(field + "[" + i + "]: " + kind + " " + badName.get()
            + "; the API server would refuse it, so nothing of this answer is written");
      }
      checkOwnerReferences(metadata, owner, field + "[" + i + "]: " + description);
      withoutEngineKeys(metadata, "labels", description);
      withoutEngineKeys(metadata, "annotations", description);
      completion.complete(metadata, description);
      otherNamespaces.complete(this, metadata, owner, description);
      ChildOrder.of(metadata, field + "[" + i + "]: " + description);
      Integer previous = seen.put(apiVersion + " " + kind + " " + namespace + "/" + name, i);
      if (previous != null) {
        throw new HookResponseException(field + "[" + previous + "] and " + field + "[" + i + "] are both "
            + description);
      }
      desired.add(new DesiredChild(type, object));
    }
    return desired;
  }

  /**
   * The owner references a hook gave an object: each one the API server takes (a version in {@code apiVersion}, and
   * {@code kind}, {@code name} and {@code uid}, as its validation requires; {@code controller} and
   * {@code blockOwnerDeletion} booleans); other owners may be listed, never as its controller, and its owner's own
   * reference, when given, must be the ControllerRef the engine writes. Else the API server would refuse the write
   * (after a rename's delete), or an update would take the object from its owner: dynamic apply merges the
   * references with the observed ones by {@code name}, so another owner of the owner's name, or the owner's own
   * reference without {@code controller: true}, would replace the ControllerRef.
   *
   * @param where {@code children[i]: Kind namespace/name}, for messages
   * @throws HookResponseException naming the reference
   */
  private void checkOwnerReferences(ObjectNode metadata, KubeObject owner, String where) {
    JsonNode refs = metadata.get("ownerReferences");
    if (refs == null || refs.isNull()) {
      return;
    }
    String refused = "; the API server would refuse it or the " + ownerRole + " would lose it, so nothing of this"
        + " answer is written";
    if (!refs.isArray()) {
      throw new HookResponseException(where + ": metadata.ownerReferences must be a list, got " + refs.getNodeType()
          + refused);
    }
    for (int i = 0; i < refs.size(); i++) {
      JsonNode ref = refs.get(i);
      if (!ref.isObject()) {
        throw new HookResponseException(where + ": metadata.ownerReferences must be a list of objects, got "
            + ref.getNodeType() + refused);
      }
      String malformed = malformed(ref);
      if (malformed != null) {
        throw new HookResponseException(where + ": metadata.ownerReferences[" + i + "]." + malformed + refused);
      }
      String uid = ref.path("uid").asString("");
      String name = ref.path("name").asString("");
      boolean controller = ref.path("controller").isBoolean() && ref.path("controller").booleanValue();
      String named = ref.path("kind").asString("") + " " + ObjectNames.shown(name) + " (uid " + ObjectNames.shown(uid)
          + ")";
      if (uid.equals(owner.storedUid()) && !controller) {
        throw new HookResponseException(where + " has an owner reference to its " + ownerRole + " without"
            + " controller: true" + refused);
      }
      if (!uid.equals(owner.storedUid()) && controller) {
        throw new HookResponseException(where + " names " + named + " as its controller; only its " + ownerRole
            + " may be" + refused);
      }
      if (!uid.equals(owner.storedUid()) && name.equals(owner.name())) {
        throw new HookResponseException(where + " names an owner " + named + " of its " + ownerRole + "'s name,"
            + " which an update would merge into the " + ownerRole + "'s ControllerRef" + refused);
      }
    }
  }

  /**
   * What makes an owner reference one the API server refuses: a field its validation requires, empty or not a
   * string; an {@code apiVersion} without a version ({@code group/}, more than one {@code /}); a flag not a boolean.
   *
   * @return {@code field problem}, or {@code null} when the API server takes it
   */
  private static @Nullable String malformed(JsonNode ref) {
    for (String field : REQUIRED_IN_OWNER_REFERENCES) {
      JsonNode value = ref.get(field);
      if (value == null || !value.isString() || value.stringValue().isEmpty()) {
        return field + " must be a string that is not empty, got " + (value == null ? "none" : value.getNodeType());
      }
    }
    String apiVersion = ref.get("apiVersion").stringValue();
    if (apiVersion.indexOf('/') != apiVersion.lastIndexOf('/') || apiVersion.endsWith("/")) {
      return "apiVersion " + ObjectNames.shown(apiVersion) + " has no version";
    }
    for (String flag : OWNER_REFERENCE_FLAGS) {
      JsonNode value = ref.get(flag);
      if (value != null && !value.isNull() && !value.isBoolean()) {
        return flag + " must be a boolean, got " + value.getNodeType();
      }
    }
    return null;
  }

  /** Removes the hook's labels or annotations under the engine's own prefix ({@link #dropEngineKeys}). */
  private void withoutEngineKeys(ObjectNode metadata, String field, String description) {
    if (!(metadata.get(field) instanceof ObjectNode map)) {
      return;
    }
    List<String> engineKeys = null; // made only for an answer that has some: this runs for every desired object
    for (String key : map.propertyNames()) {
      if (key.startsWith(ShardKeys.PREFIX)) {
        engineKeys = engineKeys == null ? new ArrayList<>() : engineKeys;
        engineKeys.add(key);
      }
    }
    if (engineKeys == null) {
      return;
    }
    for (String key : engineKeys) {
      map.remove(key);
      ignored(description, field, key, ENGINE_PREFIX);
    }
  }

  /**
   * Removes, with a log line, the keys under the engine's own prefix ({@code shard.metareactor.dev/}: the shard that
   * owns a parent and its objects, with {@code --sharding}) from labels or annotations a hook answered: what the
   * engine writes there is its own, whatever an answer says (another replica's label would hand the object to that
   * replica's caches; a removed one would unassign it).
   *
   * @param keys the hook's keys, changed in place
   * @param field {@code labels} or {@code annotations}
   * @param description what they are for ({@code Kind namespace/name}), for the log line
   */
  public void dropEngineKeys(Map<String, ?> keys, String field, String description) {
    for (Iterator<String> it = keys.keySet().iterator(); it.hasNext(); ) {
      String key = it.next();
      if (key.startsWith(ShardKeys.PREFIX)) {
        it.remove();
        ignored(description, field, key, ENGINE_PREFIX);
      }
    }
  }

  /**
   * Sets a label or annotation the engine puts on each desired object itself ({@code controller-uid} with
   * {@code generateSelector}, a DecoratorController's or MapController's own keys): a value the hook gave it is
   * ignored, with a log line, and the engine's is written.
   *
   * @param metadata the object's metadata, changed in place
   * @param field {@code labels} or {@code annotations}
   * @param description {@code Kind namespace/name}, for the log line
   */
  public void setEngineKey(ObjectNode metadata, String field, String key, String value, String description) {
    ObjectNode map = metadata.get(field) instanceof ObjectNode existing ? existing : metadata.putObject(field);
    JsonNode given = map.get(key);
    if (given != null && !(given.isString() && given.stringValue().equals(value))) {
      ignored(description, field, key, "the engine sets it to " + KubeJson.quote(value));
    }
    map.put(key, value);
  }

  private void ignored(String description, String field, String key, String why) {
    // Once at info per key (a hook answering it does so on every sync), then at debug.
    boolean first = told.size() < MAX_TOLD && told.add(field + " " + key);
    String line = "{}: {} of {} {} ignored: {}";
    Object[] arguments = {declaredIn, field, description, key, why};
    if (first) {
      LOG.info(line, arguments);
    } else {
      LOG.debug(line, arguments);
    }
  }
}
