package dev.metareactor.engine.host;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A controller begun without its workers or resync timer ({@link HostedController#startOneShot}): its informers'
 * caches are filled and its hooks ready, and the caller syncs the units it chooses, each when it chooses
 * ({@code metareactor preview}). Nothing is queued: events change the caches but sync nothing by themselves.
 */
public interface OneShot {

  /** Every unit of work the controller is responsible for now (its selected objects, those holding its finalizer). */
  List<Unit> units();

  /** One unit of work: a synced object (a parent, a target, one input of a MapController's parent). */
  interface Unit {

    /** The object's namespace, {@code ""} when cluster-scoped. */
    String namespace();

    /** The object's name. */
    String name();

    /** What the unit is about beyond its object ({@code input configmaps/ns/x: }), or {@code ""}. */
    String about();

    /** The object as cached, if the caches hold it. */
    Optional<KubeObject> object();

    /**
     * One sync, as a worker runs it (a failure is a {@code SyncError} Event on the object and a
     * {@link Outcome.Kind#FAILED} outcome, never an error). A sync that cannot run yet because a cache it reads
     * is still filling (a related informer) is run again, as the work queue would, for up to {@code patience}.
     */
    Mono<Synced> sync(Duration patience);
  }

  /**
   * How a unit's sync ended.
   *
   * @param outcome the outcome a worker would have reported to the work queue
   * @param failure why the sync failed (the error's message), or {@code null} when it did not
   */
  record Synced(Outcome outcome, @Nullable String failure) {}
}
