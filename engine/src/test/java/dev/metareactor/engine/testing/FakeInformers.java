package dev.metareactor.engine.testing;

import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.informer.Informers;
import dev.metareactor.engine.kube.ApiResource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * In-memory informers for unit tests: one {@link FakeInformerLease} per resource, created on first use, so a test
 * can put objects into (and deliver events from) the very cache a controller acquires.
 */
public final class FakeInformers implements Informers {

  private final Map<ApiResource, FakeInformerLease> leases = new ConcurrentHashMap<>();

  /** The cache of {@code resource}: the one {@link #acquire} hands out. */
  public FakeInformerLease of(ApiResource resource) {
    return leases.computeIfAbsent(resource, FakeInformerLease::new);
  }

  @Override
  public InformerLease acquire(ApiResource resource) {
    return of(resource);
  }

  /** The whole resource's cache: unit tests put only the objects the selector would select. */
  @Override
  public InformerLease acquire(ApiResource resource, String namespace, String labelSelector) {
    return of(resource);
  }

  @Override
  public InformerLease acquireMetadata(ApiResource resource) {
    return of(resource);
  }

  @Override
  public InformerLease acquireMetadata(ApiResource resource, String labelSelector) {
    return of(resource);
  }

  /** The whole resource's cache: a controller reading one object of it only asks for that one. */
  @Override
  public InformerLease acquireOne(ApiResource resource, String namespace, String name) {
    return of(resource);
  }
}
