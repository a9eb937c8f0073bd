package dev.metareactor.engine.controller;

import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.host.OneShot;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.queue.Causes;
import dev.metareactor.engine.queue.Outcome;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * The keys of a controller begun for one-shot syncs ({@link HostedController#startOneShot}: a preview), each synced by
 * the runner its workers would use.
 *
 * @param <K> the work-queue key
 */
final class OneShotSyncs<K extends SyncKey> implements OneShot {
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
      public Mono<Outcome> sync() {
        return syncs.run(key, Causes.NONE);
      }

      @Override
      public String toString() {
        return key.toString();
      }
    }).toList();
  }
}
