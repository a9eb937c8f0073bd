package dev.metareactor.engine.host;

import dev.metareactor.engine.controller.SyncKey;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Outcome;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * A controller begun without its workers or resync timer ({@link HostedController#startOneShot}): its informers'
 * caches are filled and its hooks ready, and the caller syncs the keys it chooses, each when it chooses
 * ({@code metareactor preview}). Nothing is queued: events change the caches but sync nothing by themselves.
 */
public interface OneShot {

  /** Every key the controller is responsible for now (its selected objects, and those holding its finalizer). */
  List<SyncKey> keys();

  /** The cached object {@code key} is about, if the caches hold it. */
  Optional<KubeObject> object(SyncKey key);

  /**
   * One sync of {@code key}, as a worker runs it (a failure is a {@code SyncError} Event on the object and a
   * {@link Outcome.Kind#FAILED} outcome, never an error). {@code key} is one of {@link #keys()}.
   */
  Mono<Outcome> sync(SyncKey key);
}
