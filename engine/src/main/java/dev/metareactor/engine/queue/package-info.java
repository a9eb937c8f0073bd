/**
 * The work queue: {@link dev.metareactor.engine.queue.KeyedWorkQueue}, client-go's workqueue contract (a key is
 * processed by one worker at a time, re-adds while processing run once more after, fair, stingy, drains on shutdown)
 * written down in its javadoc, with per-key exponential backoff and an overall retry rate. Takes only its own options.
 */
@NullMarked
package dev.metareactor.engine.queue;

import org.jspecify.annotations.NullMarked;
