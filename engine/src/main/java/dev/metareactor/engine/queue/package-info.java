/**
 * The work queue: {@link dev.metareactor.engine.queue.KeyedWorkQueue}, client-go's workqueue contract (a key is
 * processed by one worker at a time, re-adds while processing run once more after, stingy, drains on shutdown)
 * written down in its javadoc, with per-key exponential backoff and an overall retry rate; plus what
 * controller-runtime's priority queue adds: every add says why ({@link dev.metareactor.engine.queue.Trigger}), a
 * run is handed out with the causes it coalesced ({@link dev.metareactor.engine.queue.Causes}), and changes are
 * served before resyncs, retries and echoes of the engine's own writes without starving them. Takes only its own
 * options.
 */
@NullMarked
package dev.metareactor.engine.queue;

import org.jspecify.annotations.NullMarked;
