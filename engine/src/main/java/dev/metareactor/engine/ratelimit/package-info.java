/**
 * The non-blocking token bucket (client-go's rate limiter semantics: a sustained rate with a burst) behind API
 * writes, Events and queue retries: callers wait with a timer, never by parking a thread. Thread-safe.
 */
@NullMarked
package dev.metareactor.engine.ratelimit;

import org.jspecify.annotations.NullMarked;
