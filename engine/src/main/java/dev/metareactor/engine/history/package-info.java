/**
 * Why did it sync? The engine's ring of recent syncs per parent ({@link dev.metareactor.engine.history.SyncHistory}),
 * bounded in total memory and served read-only on the management address as JSON ({@link
 * dev.metareactor.engine.history.SyncPages}: {@code /debug/syncs/...}), and the readable timeline {@code metareactor
 * why} prints from it with what it flags: hot loops, repeated failures, long waits in the queue ({@link
 * dev.metareactor.engine.history.Timeline}).
 */
@NullMarked
package dev.metareactor.engine.history;

import org.jspecify.annotations.NullMarked;
