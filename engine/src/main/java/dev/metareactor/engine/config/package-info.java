/**
 * Validated, immutable option values: the engine's options, rate limits, retry settings, listen addresses, leader
 * election and logging. A value that exists is usable; no I/O; any thread.
 */
@NullMarked
package dev.metareactor.engine.config;

import org.jspecify.annotations.NullMarked;
