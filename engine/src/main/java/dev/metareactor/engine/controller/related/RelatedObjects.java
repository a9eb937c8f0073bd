package dev.metareactor.engine.controller.related;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.HookSpec.HookVersion;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.hook.AnswerField;
import dev.metareactor.engine.hook.AnswerFields;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.ObjectMapKeys;
import dev.metareactor.engine.hook.SyncResponse.UnknownFields;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Trigger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
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
 *       minutes (as upstream), takes the informers its rules read from, and selects the objects from their caches
 *       into the {@code related} map, with an entry for every rule's type.</li>
 *   <li>An informer reads only where a rule may read ({@link ResolvedRule#scope()}): the namespace of a rule that
 *       reads one namespace (every rule of a namespaced parent's {@code v1} customize hook: its own namespace) is
 *       watched alone, so the engine never caches, say, every Secret of the cluster for a parent that may only be
 *       shown its own namespace's; a whole resource is watched only for a rule that reads every namespace (of a
 *       cluster-scoped parent, or a {@code v2} hook's) and for a cluster-scoped resource. Each informer is held
 *       while some parent's rules read from it and given back when none do (a parent deleted, or a new generation
 *       answered otherwise).</li>
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

  /** A customize answer's one field: the rules of the related objects the other hooks are shown. */
  private static final AnswerField<List<RelatedRule>> RELATED_RESOURCES = new AnswerField<>("relatedResources",
      list -> {
        if (list == null || list.isNull()) {
          return List.of();
        }
        if (!list.isArray()) {
          throw new HookResponseException("customize hook: relatedResources must be a list, got "
              + list.getNodeType());
        }
        List<RelatedRule> rules = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
          rules.add(RelatedRule.parse(list.get(i), i));
        }
        return List.copyOf(rules);
      });
  private static final AnswerFields CUSTOMIZE_ANSWER = AnswerFields.of(RELATED_RESOURCES).about("customize hook");

  private final String controllerKind;
  private final String controllerName;
  private final JsonNode controllerObject;
  private final @Nullable HookCaller hook;
  private final HookVersion version;
  private final UnknownFields unknownFields;
  private final @Nullable ControllerContext context;
  private final BiConsumer<K, Trigger> enqueue;
  private final Cache<String, List<RelatedRule>> answers = Caches.newBuilder()
      .expireAfterWrite(ANSWER_LIFETIME).maximumSize(MAX_CACHED_ANSWERS).build();
  private final RelatedIndex<K> index = new RelatedIndex<>();

  /** Guards the informers: taken by syncs, given back when no parent reads from them, or on close. */
  private final Object lock = new Object();
  private final Map<Scope, Held<K>> informers = new HashMap<>();
  /** What each parent's rules read from: the informers it holds. */
  private final Map<K, Set<Scope>> readBy = new HashMap<>();
  private final List<Disposable> subscriptions = new ArrayList<>();
  private @Nullable InformerLease namespaces;
  private boolean closed;

  /** Where an informer reads: a resource in one namespace, or ({@code ""}) in all, or a cluster-scoped one. */
  record Scope(ApiResource resource, String namespace) {
    static Scope of(ResolvedRule rule) {
      return new Scope(rule.resource(), rule.resource().namespaced() ? rule.scope() : "");
    }

    @Override
    public String toString() {
      return namespace.isEmpty() ? resource.toString() : resource + " in " + namespace;
    }
  }

  /** One informer of related objects, its event routing, and the parents whose rules read from it. */
  private static final class Held<K> {
    final InformerLease lease;
    final Disposable routing;
    final Set<K> readers = new HashSet<>();

    Held(InformerLease lease, Disposable routing) {
      this.lease = lease;
      this.routing = routing;
    }
  }

  /**
   * @param hook the customize hook, or {@code null} when the controller has none (then {@code related} is empty)
   * @param context the engine's services; may be {@code null} when {@code hook} is
   * @param hookSpec the customize hook's spec (version and {@code responseUnMarshallMode}), when there is one
   * @param enqueue re-syncs a parent, for a cause
   */
  public RelatedObjects(String controllerKind, String controllerName, JsonNode controllerObject,
      @Nullable HookCaller hook, Optional<HookSpec> hookSpec, @Nullable ControllerContext context,
      BiConsumer<K, Trigger> enqueue) {
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

  /** Forgets a parent that is gone, and gives back the informers only it read from. */
  public void forget(K key) {
    index.remove(key);
    synchronized (lock) {
      read(key, Set.of());
    }
  }

  private Mono<List<RelatedRule>> customize(HookCaller hook, KubeObject parent, ObjectNode parentJson) {
    ObjectNode request = NODES.objectNode();
    request.set("controller", controllerObject);
    request.set("parent", parentJson);
    HookCaller.RootObject root = new HookCaller.RootObject(parent.kind(), parent.namespace(), parent.name());
    return hook.call(request, root).map(this::parse);
  }

  private List<RelatedRule> parse(JsonNode body) {
    return CUSTOMIZE_ANSWER.read(body, Set.of(), unknownFields, field -> LOG.debug(
        "{} {}: customize hook answered unknown field {}", controllerKind, controllerName, field))
        .get(RELATED_RESOURCES);
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
    List<InformerLease> leases = informers(key, resolved);
    for (int i = 0; i < resolved.size(); i++) {
      if (!leases.get(i).hasSynced()) {
        throw new NotSyncedException(Scope.of(resolved.get(i)).toString());
      }
    }
    if (byNamespaceLabels && !namespaces(served).hasSynced()) {
      throw new NotSyncedException(namespaces(served).resource().toString());
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

  /** The informers {@code rules} read from, in their order, held for {@code key} (and no others any more). */
  private List<InformerLease> informers(K key, List<ResolvedRule> rules) {
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException(controllerKind + " " + controllerName + " is stopping");
      }
      Set<Scope> scopes = new HashSet<>();
      rules.forEach(rule -> scopes.add(Scope.of(rule)));
      read(key, scopes);
      List<InformerLease> leases = new ArrayList<>(rules.size());
      rules.forEach(rule -> leases.add(Objects.requireNonNull(informers.get(Scope.of(rule)), "held above").lease));
      return leases;
    }
  }

  /**
   * Under the lock: {@code key} reads from {@code scopes} from now on. Informers it starts reading from are taken
   * (started if nobody holds them); those nobody reads from any more are given back (stopped if nobody else holds
   * them: a namespace's watch ends with the last parent reading there).
   */
  private void read(K key, Set<Scope> scopes) {
    Set<Scope> before = readBy.getOrDefault(key, Set.of());
    if (before.equals(scopes)) {
      return;
    }
    for (Scope scope : scopes) {
      if (!before.contains(scope)) {
        informers.computeIfAbsent(scope, this::take).readers.add(key);
      }
    }
    for (Scope scope : before) {
      Held<K> held = informers.get(scope);
      if (!scopes.contains(scope) && held != null && held.readers.remove(key) && held.readers.isEmpty()) {
        informers.remove(scope);
        held.routing.dispose();
        held.lease.close();
        LOG.debug("{} {}: no parent reads related {} any more", controllerKind, controllerName, scope);
      }
    }
    if (scopes.isEmpty()) {
      readBy.remove(key);
    } else {
      readBy.put(key, Set.copyOf(scopes));
    }
  }

  private Held<K> take(Scope scope) {
    InformerLease lease = context().informers().acquire(scope.resource(), scope.namespace(), "");
    Disposable routing = lease.events().subscribe(event -> route(scope, event),
        error -> LOG.error("{} {}: related events of {} failed", controllerKind, controllerName, scope, error));
    return new Held<>(lease, routing);
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

  /**
   * Informer thread: look up and enqueue, nothing else. Only the rules that read from this informer are asked (an
   * object of a namespace with an informer of its own and one of every namespace is seen by both).
   */
  private void route(Scope scope, ObjectEvent event) {
    if (event.isResync()) {
      return;
    }
    try {
      Trigger trigger = event.triggerAbout(Trigger.Cause.RELATED, event.object());
      index.parentsOf(scope.resource(), scope.namespace(), event.object(), this::namespaceLabels)
          .forEach(parent -> enqueue.accept(parent, trigger));
      if (event.previous() != null) {
        index.parentsOf(scope.resource(), scope.namespace(), event.previous(), this::namespaceLabels)
            .forEach(parent -> enqueue.accept(parent, trigger));
      }
    } catch (RuntimeException e) {
      LOG.error("{} {}: routing a related {} event failed", controllerKind, controllerName, scope, e);
    }
  }

  private void routeNamespace(ObjectEvent event) {
    if (event.type() == ObjectEvent.Type.UPDATED && !event.isResync()
        && !Objects.requireNonNull(event.previous(), "an update has the previous object").labels()
            .equals(event.object().labels())) {
      Trigger trigger = event.triggerAbout(Trigger.Cause.RELATED, event.object());
      index.parentsSelectingNamespaces().forEach(parent -> enqueue.accept(parent, trigger));
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
      informers.values().forEach(held -> {
        held.routing.dispose();
        held.lease.close();
      });
      informers.clear();
      readBy.clear();
      if (namespaces != null) {
        namespaces.close();
        namespaces = null;
      }
    }
  }

  /** A related informer is still filling its cache: sync the parent again shortly, without an Event. */
  public static final class NotSyncedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NotSyncedException(String what) {
      super("the informer of related " + what + " has not synced yet", null, false, false);
    }
  }
}
