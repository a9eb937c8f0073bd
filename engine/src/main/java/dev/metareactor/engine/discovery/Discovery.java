package dev.metareactor.engine.discovery;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;

/**
 * API discovery: which resources the server serves, their kinds, scope and subresources. Controllers resolve the
 * resources they name through it, and wait on {@link #resource} for one that is not installed yet (a CRD created
 * after the controller), which then starts them as soon as a refresh sees it.
 *
 * <p>When it runs: once at start, then whenever what it serves may have changed — a CustomResourceDefinition or an
 * APIService added, changed or deleted ({@link #start(Flux, BooleanSupplier)}; a burst of changes is one refresh) —
 * and every {@code --discovery-interval} only while those changes cannot be followed (a watch that is forbidden or
 * not synced yet) or while the last refresh was incomplete: a group version failed, or the aggregator marked one
 * stale (an aggregated API it cannot reach; it serves no resource of it then, and the APIService's change that says
 * it is back may come before the aggregator has read its resources again). Upstream polls every interval; here a
 * converged engine makes no request at all, and a new CRD is picked up within a second instead of up to thirty.
 *
 * <p>A refresh is two requests, {@code /api} and {@code /apis}, in the aggregated format
 * ({@code apidiscovery.k8s.io/v2}, what client-go asks for since Kubernetes 1.26); a server without it is asked group
 * version by group version. A refresh that fails for some groups keeps what it learned from the others; one that
 * learns nothing keeps the previous map. Nothing blocks.
 */
public final class Discovery implements DiscoveredResources, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Discovery.class);
  private static final String AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
      + "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

  /** Changes this close together make one refresh. */
  private static final Duration SETTLE = Duration.ofMillis(300);

  private final KubeApi api;
  private final Duration interval;
  private final Scheduler scheduler;
  private final Sinks.Many<ResourceMap> snapshots = Sinks.many().replay().latest();
  private volatile ResourceMap current = ResourceMap.empty();
  private volatile boolean synced;
  /** Whether the last refresh missed group versions (failed or stale): polled again until it does not. */
  private volatile boolean incomplete;
  private @Nullable Disposable refreshing;

  /** @param scheduler where the refresh timer runs */
  public Discovery(KubeApi api, Duration interval, Scheduler scheduler) {
    this.api = Objects.requireNonNull(api, "api");
    this.interval = Objects.requireNonNull(interval, "interval");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
  }

  /** Refreshes now and then every interval, in the background (where no change can be followed). */
  public void start() {
    start(Flux.never(), () -> false);
  }

  /**
   * Refreshes now, then after each burst of {@code changes}, and every interval while {@code following} says the
   * changes cannot be followed.
   *
   * @param changes signals that the served resources may have changed
   * @param following whether {@code changes} is being delivered (its watches are synced)
   */
  public synchronized void start(Flux<?> changes, BooleanSupplier following) {
    if (refreshing != null) {
      return;
    }
    Flux<Long> polls = Flux.interval(Duration.ZERO, interval, scheduler)
        .filter(tick -> tick == 0 || incomplete || !following.getAsBoolean());
    Flux<Long> changed = changes.sampleTimeout(change -> Mono.delay(SETTLE, scheduler)).map(change -> -1L);
    refreshing = Flux.merge(polls, changed)
        .onBackpressureDrop()
        .concatMap(tick -> refreshed(), 1)
        .subscribe();
  }

  /** Whether one refresh has completed. */
  public boolean hasSynced() {
    return synced;
  }

  /** The latest snapshot (empty before the first refresh). */
  @Override
  public ResourceMap current() {
    return current;
  }

  @Override
  public Flux<ResourceMap> snapshots() {
    return snapshots.asFlux();
  }

  /** Runs one refresh and waits for it (tests, and callers off the event loops). */
  public void refresh() {
    refreshed().block();
  }

  /** One refresh; failures are logged, never signalled. */
  public Mono<Void> refreshed() {
    List<String> failed = new ArrayList<>();
    return Flux.concat(root("/api", "", failed), root("/apis", null, failed))
        .collectList()
        .doOnNext(found -> publish(found, failed))
        .onErrorResume(e -> {
          LOG.error("discovery refresh failed; keeping the previous map: {}", e.getMessage());
          return Mono.empty();
        })
        .then();
  }

  private void publish(List<ApiResource> found, List<String> failed) {
    incomplete = found.isEmpty() || !failed.isEmpty();
    if (found.isEmpty()) {
      LOG.error("discovery found no resources ({} failed); keeping the previous map", failed);
      return;
    }
    ResourceMap map = ResourceMap.of(found);
    current = map;
    synced = true;
    snapshots.emitNext(map, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
    LOG.trace("discovery refreshed: {} resources, failed: {}", map.size(), failed);
  }

  /**
   * The resources under {@code /api} (core, {@code group ""}) or {@code /apis} ({@code group null}: every group).
   */
  private Flux<ApiResource> root(String path, @Nullable String group, List<String> failed) {
    return api.get(path, AGGREGATED)
        .flatMapMany(body -> {
          JsonNode root = KubeJson.mapper().readTree(body);
          String kind = root.path("kind").asString("");
          if (kind.equals("APIGroupDiscoveryList")) {
            List<String> stale = stale(root);
            if (!stale.isEmpty()) {
              synchronized (failed) {
                failed.addAll(stale);
              }
              LOG.debug("discovery: the aggregator marks {} stale", stale);
            }
            return Flux.fromIterable(aggregated(root));
          }
          return Flux.fromIterable(legacyGroupVersions(root, group)).concatMap(groupVersion ->
              api.get((group != null && group.isEmpty() ? "/api/" : "/apis/") + groupVersion, KubeApi.JSON)
                  .flatMapIterable(list -> legacy(groupVersion, KubeJson.mapper().readTree(list)))
                  .onErrorResume(e -> {
                    synchronized (failed) {
                      failed.add(groupVersion);
                    }
                    LOG.debug("discovery of {} failed: {}", groupVersion, e.getMessage());
                    return Flux.empty();
                  }));
        })
        .onErrorResume(e -> {
          synchronized (failed) {
            failed.add(path);
          }
          LOG.debug("discovery of {} failed: {}", path, e.getMessage());
          return Flux.empty();
        });
  }

  /** {@code APIGroupDiscoveryList}: every group, every version, each resource with its scope and subresources. */
  static List<ApiResource> aggregated(JsonNode list) {
    List<ApiResource> result = new ArrayList<>();
    for (JsonNode group : list.path("items")) {
      String name = group.path("metadata").path("name").asString("");
      for (JsonNode version : group.path("versions")) {
        String v = version.path("version").asString("");
        for (JsonNode resource : version.path("resources")) {
          Set<String> subresources = new HashSet<>();
          for (JsonNode sub : resource.path("subresources")) {
            subresources.add(sub.path("subresource").asString(""));
          }
          String kind = resource.path("responseKind").path("kind").asString("");
          result.add(new ApiResource(name, v, resource.path("resource").asString(""), kind,
              "Namespaced".equals(resource.path("scope").asString("")), subresources));
        }
      }
    }
    return result;
  }

  /**
   * The group versions an {@code APIGroupDiscoveryList} marks {@code Stale}: the aggregator could not read them (an
   * aggregated API unreachable) and lists none of their resources, or what it last read.
   */
  static List<String> stale(JsonNode list) {
    List<String> result = new ArrayList<>();
    for (JsonNode group : list.path("items")) {
      for (JsonNode version : group.path("versions")) {
        if ("Stale".equals(version.path("freshness").asString(""))) {
          String name = group.path("metadata").path("name").asString("");
          result.add((name.isEmpty() ? "" : name + "/") + version.path("version").asString(""));
        }
      }
    }
    return result;
  }

  /** The group versions of a legacy {@code APIVersions} ({@code /api}) or {@code APIGroupList} ({@code /apis}). */
  private static List<String> legacyGroupVersions(JsonNode root, @Nullable String group) {
    List<String> result = new ArrayList<>();
    if (group != null && group.isEmpty()) {
      root.path("versions").forEach(version -> result.add(version.asString()));
      return result;
    }
    for (JsonNode g : root.path("groups")) {
      for (JsonNode version : g.path("versions")) {
        result.add(version.path("groupVersion").asString());
      }
    }
    return result;
  }

  /** An {@code APIResourceList}: resources, with {@code name/sub} entries folded into their parents. */
  static List<ApiResource> legacy(String groupVersion, JsonNode list) {
    int slash = groupVersion.indexOf('/');
    String group = slash < 0 ? "" : groupVersion.substring(0, slash);
    String version = slash < 0 ? groupVersion : groupVersion.substring(slash + 1);
    Map<String, Set<String>> subresources = new HashMap<>();
    for (JsonNode resource : list.path("resources")) {
      String name = resource.path("name").asString("");
      int sub = name.indexOf('/');
      if (sub > 0) {
        subresources.computeIfAbsent(name.substring(0, sub), k -> new HashSet<>()).add(name.substring(sub + 1));
      }
    }
    List<ApiResource> result = new ArrayList<>();
    for (JsonNode resource : list.path("resources")) {
      String name = resource.path("name").asString("");
      if (name.contains("/")) {
        continue;
      }
      result.add(new ApiResource(group, version, name, resource.path("kind").asString(""),
          resource.path("namespaced").asBoolean(false), subresources.getOrDefault(name, Set.of())));
    }
    return result;
  }

  @Override
  public synchronized void close() {
    if (refreshing != null) {
      refreshing.dispose();
      refreshing = null;
    }
    snapshots.tryEmitComplete();
  }
}
