package dev.metareactor.engine.discovery;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * API discovery, refreshed every {@code --discovery-interval}: which resources the server serves, their kinds,
 * scope and subresources. Controllers resolve the resources they name through it, and wait on
 * {@link #resource} for one that is not installed yet (a CRD created after the controller), which then starts
 * them as soon as a refresh sees it.
 *
 * <p>A refresh that fails for some groups keeps what it learned from the others; one that learns nothing keeps
 * the previous map. Refreshes run on the given (blocking-friendly) scheduler, never on an event loop.
 */
public final class Discovery implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Discovery.class);

  private final KubernetesClient client;
  private final Duration interval;
  private final Scheduler scheduler;
  private final Sinks.Many<ResourceMap> snapshots = Sinks.many().replay().latest();
  private volatile ResourceMap current = ResourceMap.empty();
  private volatile boolean synced;
  private Disposable refreshing;

  public Discovery(KubernetesClient client, Duration interval, Scheduler scheduler) {
    this.client = Objects.requireNonNull(client, "client");
    this.interval = Objects.requireNonNull(interval, "interval");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
  }

  /** Refreshes now and then every interval, in the background. */
  public synchronized void start() {
    if (refreshing != null) {
      return;
    }
    refreshing = Flux.interval(Duration.ZERO, interval, scheduler)
        .onBackpressureDrop()
        .concatMap(tick -> Mono.fromRunnable(this::refresh).subscribeOn(scheduler), 1)
        .subscribe();
  }

  /** Whether one refresh has completed. */
  public boolean hasSynced() {
    return synced;
  }

  /** The latest snapshot (empty before the first refresh). */
  public ResourceMap current() {
    return current;
  }

  /** Every new snapshot, starting with the latest one. */
  public Flux<ResourceMap> snapshots() {
    return snapshots.asFlux();
  }

  /** The resource as soon as discovery knows it: at once if it does, else after the refresh that finds it. */
  public Mono<ApiResource> resource(String apiVersion, String resource) {
    return snapshots().mapNotNull(map -> map.byResource(apiVersion, resource).orElse(null)).next();
  }

  /** Runs one refresh on the calling thread. Failures are logged, never thrown. */
  public void refresh() {
    try {
      List<ApiResource> found = new ArrayList<>();
      int failures = 0;
      for (String groupVersion : groupVersions()) {
        try {
          found.addAll(resources(groupVersion));
        } catch (RuntimeException e) {
          failures++;
          LOG.debug("discovery of {} failed: {}", groupVersion, e.getMessage());
        }
      }
      if (found.isEmpty()) {
        LOG.error("discovery found no resources ({} group versions failed); keeping the previous map", failures);
        return;
      }
      ResourceMap map = ResourceMap.of(found);
      current = map;
      synced = true;
      snapshots.emitNext(map, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
      LOG.trace("discovery refreshed: {} resources, {} group versions failed", map.size(), failures);
    } catch (RuntimeException e) {
      LOG.error("discovery refresh failed; keeping the previous map: {}", e.getMessage());
    }
  }

  private List<String> groupVersions() {
    List<String> result = new ArrayList<>();
    result.add("v1");
    for (APIGroup group : client.getApiGroups().getGroups()) {
      for (GroupVersionForDiscovery version : group.getVersions()) {
        result.add(version.getGroupVersion());
      }
    }
    return result;
  }

  private List<ApiResource> resources(String groupVersion) {
    APIResourceList list = client.getApiResources(groupVersion);
    if (list == null || list.getResources() == null) {
      return List.of();
    }
    int slash = groupVersion.indexOf('/');
    String group = slash < 0 ? "" : groupVersion.substring(0, slash);
    String version = slash < 0 ? groupVersion : groupVersion.substring(slash + 1);
    Map<String, Set<String>> subresources = new HashMap<>();
    for (APIResource resource : list.getResources()) {
      int sub = resource.getName().indexOf('/');
      if (sub > 0) {
        subresources.computeIfAbsent(resource.getName().substring(0, sub), k -> new HashSet<>())
            .add(resource.getName().substring(sub + 1));
      }
    }
    List<ApiResource> result = new ArrayList<>();
    for (APIResource resource : list.getResources()) {
      if (resource.getName().contains("/")) {
        continue;
      }
      result.add(new ApiResource(group, version, resource.getName(), resource.getKind(),
          Boolean.TRUE.equals(resource.getNamespaced()), subresources.getOrDefault(resource.getName(), Set.of())));
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
