package dev.metareactor.engine.controller.related;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.HookSpec.HookVersion;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.hook.SyncResponse.UnknownFields;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The customize hook and the related objects of one hosted controller.
 *
 * <ul>
 *   <li>In a sync, {@link #of} asks the customize hook ({@code {controller, parent}} -> {@code relatedResources})
 *       which objects the parent's hooks should see, caches the answer per parent UID and generation for 20
 *       minutes (as upstream), takes the informers of the related resources on first use, and selects the objects
 *       from their caches into the {@code related} map, with an entry for every rule's type.</li>
 *   <li>An event of a related object re-syncs exactly the parents whose rules select it (before or after the
 *       change), found in a {@link RelatedIndex}; informer callbacks never call a hook.</li>
 *   <li>A related informer still filling its cache fails the sync with {@link NotSyncedException}, which re-queues
 *       the parent without an Event, as upstream.</li>
 * </ul>
 *
 * @param <K> the keys of the parents (the objects the hooks are about) in the controller's work queue
 */
public final class RelatedObjects<K> implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RelatedObjects.class);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  /** Upstream's customize response lifetime. */
  private static final Duration ANSWER_LIFETIME = Duration.ofMinutes(20);
  private static final int MAX_CACHED_ANSWERS = 100_000;

  private final String controllerKind;
  private final String controllerName;
  private final JsonNode controllerObject;
  private final @Nullable HookCaller hook;
  private final HookVersion version;
  private final UnknownFields unknownFields;
  private final @Nullable ControllerContext context;
  private final Consumer<K> enqueue;
  private final Cache<String, List<RelatedRule>> answers = Caffeine.newBuilder()
      .expireAfterWrite(ANSWER_LIFETIME).maximumSize(MAX_CACHED_ANSWERS).build();
  private final RelatedIndex<K> index = new RelatedIndex<>();

  /** Guards the informers: taken by syncs, given back on close. */
  private final Object lock = new Object();
  private final Map<ApiResource, InformerLease> informers = new java.util.HashMap<>();
  private final List<Disposable> subscriptions = new ArrayList<>();
  private @Nullable InformerLease namespaces;
  private boolean closed;

  /**
   * @param hook the customize hook, or {@code null} when the controller has none (then {@code related} is empty)
   * @param context the engine's services; may be {@code null} when {@code hook} is
   * @param hookSpec the customize hook's spec (version and {@code responseUnMarshallMode}), when there is one
   * @param enqueue re-syncs a parent
   */
  public RelatedObjects(String controllerKind, String controllerName, JsonNode controllerObject,
      @Nullable HookCaller hook, Optional<HookSpec> hookSpec, @Nullable ControllerContext context,
      Consumer<K> enqueue) {
    this.controllerKind = Objects.requireNonNull(controllerKind, "controllerKind");
    this.controllerName = Objects.requireNonNull(controllerName, "controllerName");
    this.controllerObject = Objects.requireNonNull(controllerObject, "controllerObject");
    this.hook = hook;
    this.version = hookSpec.map(HookSpec::version).orElse(HookVersion.V1);
    this.unknownFields = hookSpec.map(UnknownFields::of).orElse(UnknownFields.LOOSE);
    // Without a customize hook nothing is ever read: no context is needed (a unit test may pass none).
    this.context = hook == null ? context : Objects.requireNonNull(context, "context");
    this.enqueue = Objects.requireNonNull(enqueue, "enqueue");
  }

  /**
   * The {@code related} map of a parent's sync or finalize request.
   *
   * @param parentResource the parent's resource (its scope decides where rules read and how objects are keyed)
   * @param requestVersion the version of the hook the map is for (it decides the object keys)
   * @return the map; fails with {@link HookResponseException} for a customize answer that cannot be used, with
   *     {@link NotSyncedException} while a related informer fills its cache, or with the hook's failure
   */
  public Mono<ObjectNode> of(K key, KubeObject parent, ObjectNode parentJson,
      ApiResource parentResource, HookVersion requestVersion) {
    HookCaller caller = hook;
    if (caller == null) {
      return Mono.just(NODES.objectNode());
    }
    String answerKey = parent.uid() + "/" + parent.generation();
    List<RelatedRule> cached = answers.getIfPresent(answerKey);
    Mono<List<RelatedRule>> rules = cached != null ? Mono.just(cached) : customize(caller, parent, parentJson)
        .doOnNext(answer -> answers.put(answerKey, answer));
    return rules.map(answer -> select(key, parent, parentResource.namespaced(), answer, requestVersion));
  }

  /** Forgets a parent that is gone. */
  public void forget(K key) {
    index.remove(key);
  }

  private Mono<List<RelatedRule>> customize(HookCaller hook, KubeObject parent, ObjectNode parentJson) {
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set("parent", parentJson);
    HookCaller.RootObject root = new HookCaller.RootObject(parent.kind(), parent.namespace(), parent.name());
    return hook.call(request, root).map(this::parse);
  }

  private List<RelatedRule> parse(JsonNode body) {
    if (!body.isObject()) {
      throw new HookResponseException("customize hook: response must be a JSON object, got " + body.getNodeType());
    }
    body.propertyNames().forEach(field -> {
      if (!field.equals("relatedResources")) {
        if (unknownFields == UnknownFields.STRICT) {
          throw new HookResponseException("customize hook: strict validation failed: unknown field \"" + field
              + "\"");
        }
        LOG.debug("{} {}: customize hook answered unknown field {}", controllerKind, controllerName, field);
      }
    });
    JsonNode list = body.get("relatedResources");
    if (list == null || list.isNull()) {
      return List.of();
    }
    if (!list.isArray()) {
      throw new HookResponseException("customize hook: relatedResources must be a list, got " + list.getNodeType());
    }
    List<RelatedRule> rules = new ArrayList<>(list.size());
    for (int i = 0; i < list.size(); i++) {
      rules.add(RelatedRule.parse(list.get(i), i));
    }
    return List.copyOf(rules);
  }

  private ObjectNode select(K key, KubeObject parent, boolean parentNamespaced,
      List<RelatedRule> rules, HookVersion requestVersion) {
    String parentNamespace = parentNamespaced ? parent.namespace() : "";
    ResourceMap served = context().discovery().current();
    List<ResolvedRule> resolved = new ArrayList<>(rules.size());
    for (int i = 0; i < rules.size(); i++) {
      RelatedRule rule = rules.get(i);
      ApiResource resource = served.byResource(rule.apiVersion(), rule.resource()).orElseThrow(() ->
          new HookResponseException("relatedResources: " + rule.resource() + " in " + rule.apiVersion()
              + " is not served by the API server"));
      resolved.add(ResolvedRule.resolve(rule, resource, parentNamespace, version));
    }
    // Filed before the informers are read, so the events of objects still arriving find this parent.
    index.put(key, resolved);
    boolean byNamespaceLabels = resolved.stream()
        .anyMatch(rule -> rule.rule().selection() == RelatedRule.Selection.NAMESPACE_SELECTOR);
    List<InformerLease> leases = new ArrayList<>(resolved.size());
    for (ResolvedRule rule : resolved) {
      InformerLease lease = informer(rule.resource());
      leases.add(lease);
      if (!lease.hasSynced()) {
        throw new NotSyncedException(rule.resource());
      }
    }
    if (byNamespaceLabels && !namespaces(served).hasSynced()) {
      throw new NotSyncedException(namespaces(served).resource());
    }
    ObjectNode related = NODES.objectNode();
    for (int i = 0; i < resolved.size(); i++) {
      ResolvedRule rule = resolved.get(i);
      String group = ObjectMapKeys.groupKey(rule.resource().kind(), rule.resource().apiVersion());
      ObjectNode objects = related.has(group) ? (ObjectNode) related.get(group) : related.putObject(group);
      for (KubeObject object : candidates(rule, leases.get(i))) {
        if (ResolvedRule.visibleTo(object, parentNamespace, requestVersion)
            && rule.selects(object, this::namespaceLabels)) {
          objects.set(ObjectMapKeys.objectKey(requestVersion, parentNamespaced,
              object.namespace(), object.name()), object.toTree());
        }
      }
    }
    return related;
  }

  /** What to test against a rule: the named objects, or those its label selector and namespace may select. */
  private static List<KubeObject> candidates(ResolvedRule rule, InformerLease lease) {
    List<String> names = rule.rule().names();
    if (!names.isEmpty() && (!rule.scope().isEmpty() || !rule.resource().namespaced())) {
      List<KubeObject> named = new ArrayList<>(names.size());
      names.forEach(name -> lease.get(rule.scope(), name).ifPresent(named::add));
      return named;
    }
    return lease.candidates(rule.rule().labels(), rule.scope());
  }

  private Map<String, String> namespaceLabels(String namespace) {
    InformerLease lease;
    synchronized (lock) {
      lease = namespaces;
    }
    if (lease == null || namespace.isEmpty()) {
      return Map.of();
    }
    return lease.get("", namespace).map(KubeObject::labels).orElse(Map.of());
  }

  private InformerLease informer(ApiResource resource) {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException(controllerKind + " " + controllerName + " is stopping");
      }
      return informers.computeIfAbsent(resource, r -> {
        InformerLease lease = context().informers().acquire(r);
        subscriptions.add(lease.events().subscribe(event -> route(r, event),
            error -> LOG.error("{} {}: related events of {} failed", controllerKind, controllerName, r, error)));
        return lease;
      });
    }
  }

  private InformerLease namespaces(ResourceMap served) {
    synchronized (lock) {
      if (namespaces == null) {
        ApiResource resource = served.byResource("v1", "namespaces")
            .orElseThrow(() -> new IllegalStateException("the API server does not serve v1 namespaces"));
        namespaces = context().informers().acquire(resource);
        subscriptions.add(namespaces.events().subscribe(this::routeNamespace,
            error -> LOG.error("{} {}: namespace events failed", controllerKind, controllerName, error)));
      }
      return namespaces;
    }
  }

  /** Informer thread: look up and enqueue, nothing else. */
  private void route(ApiResource resource, ObjectEvent event) {
    if (event.isResync()) {
      return;
    }
    try {
      index.parentsOf(resource, event.object(), this::namespaceLabels).forEach(enqueue);
      if (event.previous() != null) {
        index.parentsOf(resource, event.previous(), this::namespaceLabels).forEach(enqueue);
      }
    } catch (RuntimeException e) {
      LOG.error("{} {}: routing a related {} event failed", controllerKind, controllerName, resource, e);
    }
  }

  private void routeNamespace(ObjectEvent event) {
    if (event.type() == ObjectEvent.Type.UPDATED && !event.isResync()
        && !Objects.requireNonNull(event.previous(), "an update has the previous object").labels()
            .equals(event.object().labels())) {
      index.parentsSelectingNamespaces().forEach(enqueue);
    }
  }

  /** The engine's services: there is a context whenever there is a customize hook, and nothing is read without. */
  private ControllerContext context() {
    return Objects.requireNonNull(context, "a controller with a customize hook has a context");
  }

  /** Gives the related informers back. */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      subscriptions.forEach(Disposable::dispose);
      subscriptions.clear();
      informers.values().forEach(InformerLease::close);
      informers.clear();
      if (namespaces != null) {
        namespaces.close();
        namespaces = null;
      }
    }
  }

  /** A related informer is still filling its cache: sync the parent again shortly, without an Event. */
  public static final class NotSyncedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NotSyncedException(ApiResource resource) {
      super("the informer of related " + resource + " has not synced yet", null, false, false);
    }
  }
}
