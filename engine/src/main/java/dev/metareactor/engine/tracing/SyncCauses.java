package dev.metareactor.engine.tracing;

import io.opentelemetry.api.trace.SpanBuilder;

/**
 * What the work queue knows of one run of a key, added to its sync span before it starts: the causes of its
 * enqueues (as attributes, and as span links to the spans that caused them where there are some) and the time it
 * waited in the queue.
 *
 * <p>The hook point for the queue's record of enqueue causes (issue 33, points 1 and 2): the queue hands the runner
 * nothing but the key today, so the runner passes {@link #UNKNOWN}; once it hands over what it recorded, an
 * implementation of this adds it ({@code metareactor.sync.causes}, {@code metareactor.queue.wait_ms}, links) and the
 * runner passes that instead.
 */
@FunctionalInterface
public interface SyncCauses {

  /** Nothing known of the run's causes or its wait. */
  SyncCauses UNKNOWN = span -> { };

  /** Adds what is known to the sync span before it starts. */
  void describe(SpanBuilder span);
}
