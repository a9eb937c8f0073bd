/**
 * API discovery: which resources the API server serves (aggregated discovery, legacy as a fallback), refreshed when a
 * CustomResourceDefinition or APIService changes instead of by polling. Snapshots are immutable; refreshes run on
 * Reactor threads and never block.
 */
@NullMarked
package dev.metareactor.engine.discovery;

import org.jspecify.annotations.NullMarked;
