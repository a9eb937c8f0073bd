package dev.metareactor.engine.host;

import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * One running controller built from one controller object (a CompositeController, DecoratorController or
 * MapController): its informers, its work queue and its workers. The {@link ControllerHost} creates it when the
 * object appears, replaces it when the object's spec changes and stops it when the object goes.
 *
 * <p>Lifecycle: {@link #start()} once, then {@link #stop} once. Both are non-blocking.
 */
public interface HostedController {

  /** Where a controller is in its life. */
  enum Phase {
    /** Created, {@link #start()} not called yet. */
    NEW,
    /** Waiting for API discovery to serve a resource it names (a CRD not installed yet). */
    WAITING_FOR_RESOURCES,
    /** Its informers are filling their caches; no sync runs yet. */
    SYNCING,
    /** Caches synced, workers running. */
    RUNNING,
    /** Stopping or stopped. */
    STOPPED
  }

  /**
   * Starts the controller: waits until discovery serves every resource it names, takes its informers, waits for
   * their caches and starts its workers. Subscribing starts it; the returned {@code Mono} completes when the
   * workers run, and errors when the controller cannot run as configured (a resource of an unexpected scope, a
   * hook whose TLS material is unusable). Cancelling the subscription does not stop the controller: call
   * {@link #stop}.
   */
  Mono<Void> start();

  /**
   * Begins the controller as {@link #start()} does (resources, informers and their caches, hook materials) but
   * starts no worker and no resync timer: the returned {@link OneShot} syncs the keys its caller chooses. Completes
   * empty if the controller was stopped meanwhile; {@link #stop} ends it as usual.
   */
  Mono<OneShot> startOneShot();

  /** The current phase; cheap, for readiness probes. */
  Phase phase();

  /**
   * Stops the controller: stops routing events, lets in-flight syncs and already queued keys finish for at most
   * {@code drainTimeout} (then cancels them), and gives its informers back. Idempotent; may be called before
   * {@link #start()} finished.
   *
   * @return completes when everything is released
   */
  Mono<Void> stop(Duration drainTimeout);

  /**
   * Stops the controller because its controller object was deleted, and then undoes what only this controller
   * would ever undo (its finalizers on the objects it synced, which would otherwise keep them from being deleted
   * forever). Like {@link #stop}, idempotent with it: whichever runs first decides.
   */
  Mono<Void> retire(Duration drainTimeout);
}
