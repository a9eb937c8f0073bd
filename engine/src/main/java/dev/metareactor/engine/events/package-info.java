/**
 * Kubernetes Events, as upstream records them (reasons, messages, Warning and Normal), rate-limited per object and
 * written through the rate-limited API path; recording never blocks the caller.
 */
@NullMarked
package dev.metareactor.engine.events;

import org.jspecify.annotations.NullMarked;
