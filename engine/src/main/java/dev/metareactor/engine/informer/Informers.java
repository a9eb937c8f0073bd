package dev.metareactor.engine.informer;

import dev.metareactor.engine.kube.ApiResource;

/**
 * Where controllers take their informer caches from: a lease per resource (or per named object), given back with
 * {@link InformerLease#close()}. {@link SharedInformers} is the real one, one watch per resource for the whole
 * process; a test hands a controller in-memory caches instead.
 */
public interface Informers {

  /** A lease on the informer of every object of {@code resource}. */
  InformerLease acquire(ApiResource resource);

  /**
   * A lease on the informer of the objects of {@code resource} in {@code namespace} ({@code ""}: every namespace)
   * that {@code labelSelector} selects (the API's syntax; {@code ""} for all): what a replica caches of a sharded
   * controller's resources, or the leases of the shards.
   */
  InformerLease acquire(ApiResource resource, String namespace, String labelSelector);

  /**
   * A lease on an informer that keeps only the metadata of {@code resource}'s objects and none of the indexes: for
   * following changes (its {@link InformerLease#events}) of objects that are large and never read themselves.
   */
  InformerLease acquireMetadata(ApiResource resource);

  /** The same for the objects {@code labelSelector} selects (the sharder's unassigned objects). */
  InformerLease acquireMetadata(ApiResource resource, String labelSelector);

  /**
   * A lease on an informer of the one object {@code namespace/name} of {@code resource} (it need not exist yet).
   * Only {@link InformerLease#get}, {@link InformerLease#events} and {@link InformerLease#hasSynced} apply to it.
   */
  InformerLease acquireOne(ApiResource resource, String namespace, String name);
}
