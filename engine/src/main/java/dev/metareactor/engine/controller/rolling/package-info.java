/**
 * Rolling updates of a CompositeController's children ({@code RollingRecreate}, {@code RollingInPlace}): the parent
 * fields a ControllerRevision records ({@link dev.metareactor.engine.controller.rolling.RevisionPatch}), the
 * revision's name ({@link dev.metareactor.engine.controller.rolling.RevisionName}) and the children it claims
 * ({@link dev.metareactor.engine.controller.rolling.RevisionClaims}), and the revision object itself with its labels
 * and ControllerRef ({@link dev.metareactor.engine.controller.rolling.RevisionObject}), all as Metacontroller writes
 * them so that revisions written by either engine are recognised by the other; and one sync's step of a rollout
 * ({@link dev.metareactor.engine.controller.rolling.Rollout}): which revision owns which child, the state each child
 * is written with, and the parent's {@code Updated} condition.
 *
 * <p>Not yet wired into the CompositeController's sync (rolling methods are refused with a {@code CreateError} until
 * it is): the ControllerRevision informer, one sync hook call per live revision and the revision writes come next.
 *
 * <p>Pure values over JSON trees: no I/O, no threads of their own; safe to use from any thread.
 */
@NullMarked
package dev.metareactor.engine.controller.rolling;

import org.jspecify.annotations.NullMarked;
