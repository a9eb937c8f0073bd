package dev.metareactor.engine.tracing;

import io.opentelemetry.api.trace.SpanBuilder;

/**
 * What the work queue knows of one run of a key, added to its sync span before it starts: the causes of its
 * enqueues.
 *
 * <p>The work queue hands the runner each run's causes and wait ({@link dev.metareactor.engine.queue.Causes}); the
 * runner adds the wait as {@code metareactor.queue.wait_ms} and passes one of these that adds the causes as {@code
 * metareactor.sync.causes}. Span links to the spans that caused an enqueue are not made.
 */
@FunctionalInterface
public interface SyncCauses {

  /** Nothing known of the run's causes or its wait. */
  SyncCauses UNKNOWN = span -> { };

  /** Adds what is known to the sync span before it starts. */
  void describe(SpanBuilder span);
}
