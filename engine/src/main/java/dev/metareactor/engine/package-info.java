/**
 * The Metareactor engine: hosts CompositeController and DecoratorController objects, Metacontroller's lambda
 * controllers, and MapController objects, the kind Metacontroller proposed, on Project Reactor.
 *
 * <p>Data flows one way: {@code informer} (list and watch, caches with indexes) -> a kind's router in {@code
 * controller} (events to keys, never a scan) -> {@code queue} (per-key serialized work with backpressure and retries)
 * -> {@link dev.metareactor.engine.controller.ObjectSync} (the hook through {@code hook}, the apply engine, writes
 * through {@code kube}). {@code host} turns controller objects into hosted controllers; {@code server} assembles it
 * all. {@code Main} is the process: signals, exit codes.
 *
 * <p>Every engine package is {@code @NullMarked}: parameters, fields and return values are non-null unless annotated
 * {@code @Nullable}, and NullAway checks it when the module compiles.
 */
@NullMarked
package dev.metareactor.engine;

import org.jspecify.annotations.NullMarked;
