package dev.metareactor.engine.testing;

import dev.metareactor.apply.GoJson;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.selector.LabelSelector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An {@link ObjectApi} in memory for unit tests: it keeps the objects created and updated through it, and records
 * every request in order when it is made (subscribed to, as a real request would be sent), so a test can say exactly
 * which requests a sync made — none, in a steady state. Creates get a UID and a resourceVersion, and are refused
 * with 409 when an object of the name is kept (as the API server refuses them); updates keep the UID; patches are
 * recorded (with their bodies) and answered with the object as kept, not applied, but a JSON Patch's {@code test}
 * operations are checked against it (422 when one fails, as the API server answers), and so is another patch's
 * {@code metadata.uid} (422 when it is not the object's: the API server's field is immutable). A missing object answers
 * 404 (a test puts existing ones in with {@link #holding}); a test makes the next request of a verb fail with
 * {@link #refusingNext}.
 */
public final class RecordingApi implements ObjectApi {

  /**
   * One request: its verb, resource, namespace and name, and its body as the engine sends it ({@code null} when it
   * has none; a delete's is its UID precondition, {@code null} without one).
   */
  public record Action(String verb, String resource, String namespace, String name, String body) {
    @Override
    public String toString() {
      return verb + " " + resource + " " + KubeObject.namespacedName(namespace, name);
    }
  }

  private final List<Action> actions = new ArrayList<>();
  /** By verb, the failure the next request of that verb answers with. */
  private final Map<String, ApiException> refusals = new ConcurrentHashMap<>();
  private final Map<String, ObjectNode> objects = new ConcurrentHashMap<>();
  private final AtomicLong versions = new AtomicLong(1000);

  /** Keeps {@code object} as the API server would have it (without recording a request). */
  public RecordingApi holding(ApiResource resource, KubeObject object) {
    objects.put(key(resource, object.namespace(), object.name()), object.toTree());
    return this;
  }

  /**
   * Keeps {@code object} as the API server would have it, {@code managedFields} included (which a {@link KubeObject}
   * drops), without recording a request.
   */
  public RecordingApi holding(ApiResource resource, ObjectNode object) {
    KubeObject described = KubeObject.of(object);
    objects.put(key(resource, described.namespace(), described.name()), object.deepCopy());
    return this;
  }

  /**
   * Answers the next request of {@code verb} ({@code patch-status}, {@code get}...) with {@code code}, after recording
   * it (as the API server refuses a request it received).
   */
  public RecordingApi refusingNext(String verb, int code, String reason) {
    refusals.put(verb, new ApiException(code, reason, verb + " refused: " + code + " " + reason, Duration.ZERO));
    return this;
  }

  /** The refusal set for {@code verb}, if any, taken (it answers one request). */
  private <T> Optional<Mono<T>> refused(String verb) {
    ApiException refusal = refusals.remove(verb);
    return refusal == null ? Optional.empty() : Optional.of(Mono.error(refusal));
  }

  /** The requests made so far, in order. */
  public synchronized List<Action> actions() {
    return List.copyOf(actions);
  }

  /** Forgets the requests made so far (a benchmark repeating a sync keeps only the last one's). */
  public synchronized void clearActions() {
    actions.clear();
  }

  /** The object as kept now, as a watch event would bring it (without recording a request). */
  public Optional<KubeObject> object(ApiResource resource, String namespace, String name) {
    return Optional.ofNullable(objects.get(key(resource, namespace, name))).map(KubeObject::of);
  }

  /** Every object of {@code resource} kept now (what a relist would bring). */
  public List<KubeObject> objects(ApiResource resource) {
    String prefix = resource.resource() + "/";
    return objects.entrySet().stream().filter(entry -> entry.getKey().startsWith(prefix))
        .map(entry -> KubeObject.of(entry.getValue())).toList();
  }

  private synchronized void record(String verb, ApiResource resource, String namespace, String name, String body) {
    actions.add(new Action(verb, resource.resource(), namespace, name, body));
  }

  private static String key(ApiResource resource, String namespace, String name) {
    return resource.resource() + "/" + KubeObject.namespacedName(namespace, name);
  }

  private static Mono<Written> notFound(String name) {
    return Mono.error(new ApiException(404, "NotFound", name + " not found", Duration.ZERO));
  }

  @Override
  public Mono<KubeObject> get(ApiResource resource, String namespace, String name) {
    return Mono.defer(() -> nowGet(resource, namespace, name));
  }

  private Mono<KubeObject> nowGet(ApiResource resource, String namespace, String name) {
    record("get", resource, namespace, name, null);
    Optional<Mono<KubeObject>> refused = refused("get");
    if (refused.isPresent()) {
      return refused.get();
    }
    ObjectNode object = objects.get(key(resource, namespace, name));
    return object == null ? notFound(name).map(Written::object) : Mono.just(KubeObject.of(object));
  }

  /** Records a {@code list} and answers with the objects kept now that the selector selects (whole, always). */
  @Override
  public Mono<List<KubeObject>> list(ApiResource resource, String labelSelector, boolean metadataOnly) {
    return Mono.fromSupplier(() -> {
      record("list", resource, "", "", labelSelector);
      LabelSelector selector = LabelSelector.parse(labelSelector);
      return objects(resource).stream().filter(object -> selector.matches(object.labels())).toList();
    });
  }

  @Override
  public Mono<ObjectNode> getTree(ApiResource resource, String namespace, String name) {
    return Mono.defer(() -> {
      record("get", resource, namespace, name, null);
      ObjectNode object = objects.get(key(resource, namespace, name));
      return object == null ? notFound(name).then(Mono.empty()) : Mono.just(object.deepCopy());
    });
  }

  /**
   * Records a server-side apply ({@code apply}, or {@code apply-dry-run}) and, unless a dry run, keeps the
   * configuration as the object when there is none yet (a create) and answers with the object as kept otherwise
   * (not merged, as patches).
   */
  @Override
  public Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun) {
    return Mono.defer(() -> {
      KubeObject described = KubeObject.of(configuration);
      ObjectNode kept = objects.get(key(resource, described.namespace(), described.name()));
      if (kept != null || dryRun) {
        record(dryRun ? "apply-dry-run" : "apply", resource, described.namespace(), described.name(),
            GoJson.marshal(configuration));
        return Mono.just(new Written(KubeJson.bytes(kept != null ? kept : configuration)));
      }
      return store("apply", resource, configuration);
    });
  }

  /**
   * Records an {@code apply-create}; keeps the configuration as the object when there is none of its name, else
   * answers 409 {@code Conflict} and keeps what is there.
   */
  @Override
  public Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return Mono.defer(() -> storeNew("apply-create", resource, configuration, "Conflict"));
  }

  /** Records a create; keeps the object when there is none of its name, else answers 409 {@code AlreadyExists}. */
  @Override
  public Mono<Written> create(ApiResource resource, ObjectNode object) {
    return Mono.defer(() -> storeNew("create", resource, object, "AlreadyExists"));
  }

  private Mono<Written> storeNew(String verb, ApiResource resource, ObjectNode object, String refusal) {
    KubeObject described = KubeObject.of(object);
    Optional<Mono<Written>> refused = refused(verb);
    if (refused.isPresent()) {
      record(verb, resource, described.namespace(), described.name(), GoJson.marshal(object));
      return refused.get();
    }
    if (objects.containsKey(key(resource, described.namespace(), described.name()))) {
      record(verb, resource, described.namespace(), described.name(), GoJson.marshal(object));
      return Mono.error(new ApiException(409, refusal, described.namespacedName() + " exists", Duration.ZERO));
    }
    return store(verb, resource, object);
  }

  @Override
  public Mono<Written> update(ApiResource resource, ObjectNode object) {
    return Mono.defer(() -> store("update", resource, object));
  }

  /**
   * Records the write and keeps the object, with a new resourceVersion (and, when created, a UID, and no status where
   * the resource has a status subresource).
   */
  private Mono<Written> store(String verb, ApiResource resource, ObjectNode object) {
    KubeObject described = KubeObject.of(object);
    record(verb, resource, described.namespace(), described.name(), GoJson.marshal(object));
    ObjectNode stored = object.deepCopy();
    if (resource.hasStatusSubresource() && !verb.equals("update")) {
      stored.remove("status"); // what the API server does on create, where the status has its own subresource
    }
    ObjectNode metadata = (ObjectNode) stored.get("metadata");
    if (!verb.equals("update")) {
      metadata.put("uid", "uid-" + versions.incrementAndGet());
    } else {
      // The server keeps the object's UID whatever the update's body says.
      ObjectNode kept = objects.get(key(resource, described.namespace(), described.name()));
      if (kept != null && kept.path("metadata").has("uid")) {
        metadata.set("uid", kept.path("metadata").get("uid"));
      }
    }
    metadata.put("resourceVersion", Long.toString(versions.incrementAndGet()));
    objects.put(key(resource, described.namespace(), described.name()), stored);
    return Mono.just(new Written(KubeJson.bytes(stored)));
  }

  @Override
  public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    return Mono.defer(() -> nowPatch(resource, namespace, name, type, body));
  }

  private Mono<Written> nowPatch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    record("patch", resource, namespace, name, GoJson.marshal(body));
    return this.<Written>refused("patch").orElseGet(() -> kept(resource, namespace, name, type, body));
  }

  @Override
  public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    return Mono.defer(() -> nowPatchStatus(resource, namespace, name, type, body));
  }

  private Mono<Written> nowPatchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    record("patch-status", resource, namespace, name, GoJson.marshal(body));
    return this.<Written>refused("patch-status").orElseGet(() -> kept(resource, namespace, name, type, body));
  }

  /**
   * Records an {@code apply-status}; the object as kept (its status not changed), or 404 when there is none of its
   * name.
   */
  @Override
  public Mono<Written> applyStatus(ApiResource resource, ObjectNode configuration, String fieldManager) {
    return Mono.defer(() -> {
      KubeObject described = KubeObject.of(configuration);
      record("apply-status", resource, described.namespace(), described.name(), GoJson.marshal(configuration));
      return this.<Written>refused("apply-status").orElseGet(() -> {
        ObjectNode object = objects.get(key(resource, described.namespace(), described.name()));
        return object == null ? notFound(described.name()) : Mono.just(new Written(KubeJson.bytes(object)));
      });
    });
  }

  /**
   * The object as kept, unless it is missing (404), or another patch's {@code metadata.uid} is not its UID (422: the
   * field is immutable) or a JSON Patch's {@code test} fails on it (422).
   */
  private Mono<Written> kept(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    ObjectNode object = objects.get(key(resource, namespace, name));
    if (object == null) {
      return notFound(name);
    }
    JsonNode uid = body.path("metadata").path("uid");
    if (type != PatchType.JSON && uid.isString() && !uid.equals(object.path("metadata").path("uid"))) {
      return Mono.error(new ApiException(422, "Invalid", resource.kind() + " \"" + name + "\" is invalid: "
          + "metadata.uid: Invalid value: \"" + uid.asString() + "\": field is immutable", Duration.ZERO));
    }
    if (type == PatchType.JSON) {
      for (JsonNode operation : body) {
        if (operation.path("op").asString("").equals("test")
            && !operation.path("value").equals(object.at(operation.path("path").asString("")))) {
          return Mono.error(new ApiException(422, "Invalid", "the server rejected our request due to an error in our "
              + "request: testing value " + operation.path("path").asString() + " failed: test failed",
              Duration.ZERO));
        }
      }
    }
    return Mono.just(new Written(KubeJson.bytes(object)));
  }

  @Override
  public Mono<Void> delete(ApiResource resource, String namespace, String name, String uid) {
    return Mono.defer(() -> nowDelete(resource, namespace, name, uid));
  }

  @Override
  public Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion) {
    return Mono.defer(() -> nowDelete(resource, namespace, name, null));
  }

  private Mono<Void> nowDelete(ApiResource resource, String namespace, String name, String uid) {
    record("delete", resource, namespace, name, uid);
    return this.<Void>refused("delete").orElseGet(() -> {
      objects.remove(key(resource, namespace, name));
      return Mono.empty();
    });
  }
}
