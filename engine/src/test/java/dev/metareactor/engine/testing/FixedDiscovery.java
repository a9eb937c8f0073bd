package dev.metareactor.engine.testing;

import dev.metareactor.engine.discovery.DiscoveredResources;
import dev.metareactor.engine.discovery.ResourceMap;
import dev.metareactor.engine.kube.ApiResource;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/** Discovery for unit tests: serves the resources a test names, and new ones when it {@link #serve}s them. */
public final class FixedDiscovery implements DiscoveredResources {

  private final Sinks.Many<ResourceMap> snapshots = Sinks.many().replay().latest();
  private volatile ResourceMap current = ResourceMap.empty();

  public FixedDiscovery(ApiResource... resources) {
    serve(resources);
  }

  /** From now on, exactly these resources are served. */
  public synchronized FixedDiscovery serve(ApiResource... resources) {
    current = ResourceMap.of(List.of(resources));
    snapshots.emitNext(current, Sinks.EmitFailureHandler.FAIL_FAST);
    return this;
  }

  @Override
  public ResourceMap current() {
    return current;
  }

  @Override
  public Flux<ResourceMap> snapshots() {
    return snapshots.asFlux();
  }
}
