package dev.metareactor.engine.hook;

import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.discovery.DiscoveredResources;
import dev.metareactor.engine.hook.WebhookMaterials.ObjectRef;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.Informers;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.http.HookAuth;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookIdentity;
import dev.metareactor.http.InvalidWebhookException;
import dev.metareactor.http.WebhookSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import tools.jackson.databind.JsonNode;

/**
 * The hooks of one hosted controller, kept in step with the Secrets and ConfigMaps their TLS material and
 * credentials come from. Upstream reads them once, when the controller is created; here each referenced object is
 * watched (one small informer per object, never a cache of every Secret), and when one changes the hooks that read
 * it are rebuilt in place — the controller keeps running, and the next call uses the new material.
 *
 * <p>A hook whose material is missing or unusable fails its calls with the reason (so each parent's sync records
 * it) until the material is fixed; each new problem is also reported once through the given callback. A hook that
 * sends credentials (its own, or the user info of its URL) over plain {@code http} is reported once too: it works,
 * but anyone on the network path can read them.
 *
 * <p>Use: {@link #register} every hook, {@link #watch} (and wait for the returned informers), {@link #refresh},
 * and {@link #close} when the controller stops.
 */
public final class HookMaterials implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HookMaterials.class);

  private record Registered(WebhookSpec base, WebhookMaterials materials, HookIdentity identity,
      WebhookCaller caller) {}

  private final Informers informers;
  private final DiscoveredResources discovery;
  private final HookClient client;
  private final Scheduling scheduling;
  private final Consumer<String> onProblem;
  private final Consumer<String> onInsecure;
  private final WriteFence fence;
  private final List<Registered> hooks = new ArrayList<>();
  private final Map<ObjectRef, InformerLease> watched = new LinkedHashMap<>();
  private final List<Disposable> subscriptions = new ArrayList<>();
  private final Map<HookIdentity, String> reported = new HashMap<>();
  private final Set<HookIdentity> warnedInsecure = new HashSet<>();
  private boolean closed;

  /**
   * @param onProblem told once about each new reason a hook cannot be called (for a Warning Event)
   * @param onInsecure told once per hook that sends credentials over plain {@code http} (for a Warning Event)
   * @param fence asked by every hook right before each call (see {@link WebhookCaller})
   */
  public HookMaterials(Informers informers, DiscoveredResources discovery, HookClient client, Scheduling scheduling,
      Consumer<String> onProblem, Consumer<String> onInsecure, WriteFence fence) {
    this.informers = Objects.requireNonNull(informers, "informers");
    this.discovery = Objects.requireNonNull(discovery, "discovery");
    this.client = Objects.requireNonNull(client, "client");
    this.scheduling = Objects.requireNonNull(scheduling, "scheduling");
    this.onProblem = Objects.requireNonNull(onProblem, "onProblem");
    this.onInsecure = Objects.requireNonNull(onInsecure, "onInsecure");
    this.fence = Objects.requireNonNull(fence, "fence");
  }

  /**
   * Registers a hook. One that needs no material can be called at once; one that does fails its calls until
   * {@link #refresh} has read the material.
   *
   * @throws InvalidWebhookException when a hook without material has unusable settings
   */
  public synchronized WebhookCaller register(WebhookSpec base, WebhookMaterials materials, HookIdentity identity) {
    WebhookCaller caller = new WebhookCaller(identity.hookType() + " hook: waiting for "
        + materials.references(), scheduling.work(), fence);
    if (materials.references().isEmpty()) {
      caller.use(client.hook(checked(materials.applyTo(base, ref -> Optional.empty()), identity), identity));
    }
    hooks.add(new Registered(base, materials, identity, caller));
    return caller;
  }

  /**
   * Starts watching every Secret and ConfigMap the registered hooks read.
   *
   * @return the informers to wait for before the first {@link #refresh}
   */
  public synchronized List<InformerLease> watch() {
    for (Registered hook : hooks) {
      for (ObjectRef ref : hook.materials().references()) {
        watched.computeIfAbsent(ref, r -> {
          InformerLease lease = informers.acquireOne(resourceOf(r), r.namespace(), r.name());
          // Rebuilding a hook parses PEM and builds a TLS context: not on an informer thread. The replay of
          // what is cached when this subscribes causes one redundant refresh, which is harmless.
          subscriptions.add(lease.events().filter(event -> !event.isResync()).subscribe(
              event -> scheduling.blocking().schedule(this::refresh),
              error -> LOG.error("watching {} failed", r, error)));
          return lease;
        });
      }
    }
    return List.copyOf(watched.values());
  }

  private ApiResource resourceOf(ObjectRef ref) {
    String plural = ref.kind() == ObjectRef.Kind.SECRET ? "secrets" : "configmaps";
    return discovery.current().byResource("v1", plural)
        .orElseThrow(() -> new IllegalStateException("the API server does not serve v1 " + plural));
  }

  /** Reads the material in and rebuilds every hook that needs some. */
  public synchronized void refresh() {
    if (closed) {
      return;
    }
    for (Registered hook : hooks) {
      if (hook.materials().references().isEmpty()) {
        continue;
      }
      try {
        WebhookSpec spec = checked(hook.materials().applyTo(hook.base(), this::data), hook.identity());
        hook.caller().use(client.hook(spec, hook.identity()));
        if (reported.remove(hook.identity()) != null) {
          LOG.info("{} hook of {} {}: its material is usable again", hook.identity().hookType(),
              hook.identity().controllerType(), hook.identity().controllerName());
        }
      } catch (WebhookMaterials.MaterialException | InvalidWebhookException e) {
        String problem = hook.identity().hookType() + " hook: " + e.getMessage();
        hook.caller().unusable(problem);
        if (!problem.equals(reported.put(hook.identity(), problem))) {
          onProblem.accept(problem);
        }
      }
    }
  }

  /** The spec as it is, after telling once if it sends credentials in the clear. */
  private WebhookSpec checked(WebhookSpec spec, HookIdentity identity) {
    if (spec.sendsCredentialsInTheClear() && warnedInsecure.add(identity)) {
      String scheme = spec.effectiveAuth().map(HookAuth::scheme).orElse("");
      onInsecure.accept(identity.hookType() + " hook " + spec.endpoint() + " sends " + scheme
          + " credentials over plain http, where anyone on the network path can read them: use https");
    }
    return spec;
  }

  /** The decoded data of a watched object, or empty if it does not exist. */
  private Optional<Map<String, String>> data(ObjectRef ref) {
    InformerLease lease = watched.get(ref);
    if (lease == null) {
      return Optional.empty();
    }
    return lease.get(ref.namespace(), ref.name()).map(object -> decode(ref, object));
  }

  private static Map<String, String> decode(ObjectRef ref, KubeObject object) {
    Map<String, String> values = new HashMap<>();
    for (Map.Entry<String, JsonNode> entry : object.toTree().path("data").properties()) {
      if (entry.getValue().isString()) {
        String text = entry.getValue().stringValue();
        values.put(entry.getKey(), ref.kind() == ObjectRef.Kind.SECRET
            ? new String(Base64.getDecoder().decode(text), StandardCharsets.UTF_8) : text);
      }
    }
    return values;
  }

  /** Stops watching and gives the informers back. */
  @Override
  public synchronized void close() {
    closed = true;
    subscriptions.forEach(Disposable::dispose);
    subscriptions.clear();
    watched.values().forEach(InformerLease::close);
    watched.clear();
  }
}
