package dev.metareactor.engine.tracing;

import io.opentelemetry.api.trace.SpanBuilder;

/**
 * What the work queue knows of one run of a key, added to its sync span before it starts: the causes of its
 * enqueues (as attributes, and as span links to the spans that caused them where there are some) and the time it
 * waited in the queue.
 *
 * <p>The work queue hands the runner each run's causes ({@link dev.metareactor.engine.queue.Causes}); the runner
 * passes one of these that adds them as {@code metareactor.sync.causes}. The time in the queue
 * ({@code metareactor.queue.wait_ms}) and span links to the spans that caused an enqueue are not handed over yet.
 */
@FunctionalInterface
public interface SyncCauses {

  /** Nothing known of the run's causes or its wait. */
  SyncCauses UNKNOWN = span -> { };

  /** Adds what is known to the sync span before it starts. */
  void describe(SpanBuilder span);
}
