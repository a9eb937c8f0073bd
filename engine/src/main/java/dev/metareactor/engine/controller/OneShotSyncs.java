package dev.metareactor.engine.controller;

import dev.metareactor.engine.controller.related.RelatedObjects;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Causes;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The keys of a controller begun for one-shot syncs ({@link HostedController#startOneShot}: a preview), each synced by
 * the runner its workers would use. A run that ends on a related informer still filling its cache (a customize hook's
 * {@code relatedResources}, whose informers the sync itself starts) is run again after a short pause, growing up to
 * {@link #MOST_PAUSE}, as the work queue re-runs it with backoff in the engine, until the caller's patience is over;
 * whatever a failed sync ended on is handed back with its outcome, so the caller can say why.
 *
 * @param <K> the work-queue key
 */
final class OneShotSyncs<K extends SyncKey> implements OneShot {
  /** The first pause before a run that found a related informer not synced is tried again. */
  static final Duration FIRST_PAUSE = Duration.ofMillis(20);
  /** The longest pause between two such runs. */
  static final Duration MOST_PAUSE = Duration.ofMillis(500);

  private final ObjectSync<K> wired;
  private final SyncRunner<K> syncs;

  OneShotSyncs(ObjectSync<K> wired, SyncRunner<K> syncs) {
    this.wired = wired;
    this.syncs = syncs;
  }

  @Override
  public List<Unit> units() {
    return wired.responsibleKeys().stream().<Unit>map(key -> new Unit() {
      @Override
      public String namespace() {
        return key.namespace();
      }

      @Override
      public String name() {
        return key.name();
      }

      @Override
      public String about() {
        return key.about();
      }

      @Override
      public Optional<KubeObject> object() {
        return wired.cached(key);
      }

      @Override
      public Mono<Synced> sync(Duration patience) {
        return Mono.defer(() -> syncUntil(key, System.nanoTime() + patience.toNanos(), FIRST_PAUSE));
      }

      @Override
      public String toString() {
        return key.toString();
      }
    }).toList();
  }

  /** One run of {@code key}; one that found a related informer not synced is run again until {@code deadline}. */
  private Mono<Synced> syncUntil(K key, long deadline, Duration pause) {
    AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();
    return syncs.run(key, Causes.NONE, failure::set).flatMap(outcome -> {
      Throwable error = failure.get();
      if (error instanceof RelatedObjects.NotSyncedException && System.nanoTime() + pause.toNanos() < deadline) {
        Duration next = pause.multipliedBy(2).compareTo(MOST_PAUSE) > 0 ? MOST_PAUSE : pause.multipliedBy(2);
        return Mono.delay(pause).then(syncUntil(key, deadline, next));
      }
      return Mono.just(new Synced(outcome, error == null ? null : message(error)));
    });
  }

  private static String message(Throwable error) {
    return error.getMessage() == null ? error.getClass().getName() : error.getMessage();
  }
}
