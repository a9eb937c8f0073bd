package dev.metareactor.engine.controller;

import dev.metareactor.engine.informer.InformerLease;
import java.util.ArrayList;
import java.util.List;
import reactor.core.Disposable;

/**
 * What a hosted controller holds while it runs, given back in two steps when it stops: what feeds its work queue
 * (event subscriptions, timers, its registrations) first, so that nothing new is queued while it drains; the rest
 * (informers, related objects, hook materials, workers) once the queue drained, since a running sync still reads
 * them. Used under the controller's lifecycle lock.
 */
final class Holdings {

  private final List<Disposable> untilStop = new ArrayList<>();
  private final List<Disposable> untilDrained = new ArrayList<>();
  private final List<InformerLease> leases = new ArrayList<>();

  /** Holds {@code lease} until the queue drained; returns it. */
  InformerLease lease(InformerLease lease) {
    leases.add(lease);
    return lease;
  }

  /** Ends {@code feed} when the controller stops, before its queue drains. */
  void untilStop(Disposable feed) {
    untilStop.add(feed);
  }

  /** Ends {@code held} once the queue drained. */
  void untilDrained(Disposable held) {
    untilDrained.add(held);
  }

  /** Whether every informer held has its cache filled. */
  boolean informersSynced() {
    return leases.stream().allMatch(InformerLease::hasSynced);
  }

  /** Ends what feeds the queue. */
  void stop() {
    untilStop.forEach(Disposable::dispose);
    untilStop.clear();
  }

  /** Ends everything held, in the order it was taken. */
  void release() {
    stop();
    untilDrained.forEach(Disposable::dispose);
    untilDrained.clear();
    leases.forEach(InformerLease::close);
    leases.clear();
  }
}
