/**
 * The controller objects' specs, as users write them: CompositeController, DecoratorController and MapController
 * parsed from their JSON into immutable records implementing one contract ({@link
 * dev.metareactor.engine.api.ControllerSpec}), validated whole. An invalid object fails with an
 * {@link dev.metareactor.engine.api.InvalidControllerException} naming the field, which becomes a {@code CreateError}
 * Event on it. No I/O; any thread.
 */
@NullMarked
package dev.metareactor.engine.api;

import org.jspecify.annotations.NullMarked;
