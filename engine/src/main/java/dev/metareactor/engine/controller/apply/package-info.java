/**
 * How the engine writes the objects controllers own — a CompositeController's children, a DecoratorController's
 * attachments, a MapController's outputs — as {@code --apply-strategy} says: {@link
 * dev.metareactor.engine.controller.apply.DynamicApplier} (Metacontroller's client-side three-way merge with the
 * last-applied annotation, the default) or {@link dev.metareactor.engine.controller.apply.ServerSideApplier}
 * (Kubernetes server-side apply with the engine's field manager). Both decide from the informer cache alone whether
 * a child needs a write, so a converged child costs no request, and each hands over children the other wrote, so
 * the strategy can be switched on a running cluster in either direction. Neither creates over an existing object:
 * dynamic apply creates with a {@code POST}, server-side apply with an apply that only creates.
 */
@NullMarked
package dev.metareactor.engine.controller.apply;

import org.jspecify.annotations.NullMarked;
