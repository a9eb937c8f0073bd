package dev.metareactor.engine.discovery;

import dev.metareactor.engine.kube.ApiResource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the API server serves, as controllers read it: the latest {@link ResourceMap} and each new one.
 * {@link Discovery} is the real one; a test hands a controller a fixed map instead of a server to discover.
 */
public interface DiscoveredResources {

  /** The latest snapshot (empty before the first discovery). */
  ResourceMap current();

  /** Every new snapshot, starting with the latest one. */
  Flux<ResourceMap> snapshots();

  /** The resource as soon as discovery knows it: at once if it does, else after the refresh that finds it. */
  default Mono<ApiResource> resource(String apiVersion, String resource) {
    return snapshots().mapNotNull(map -> map.byResource(apiVersion, resource).orElse(null)).next();
  }
}
