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
 * <p>{@link dev.metareactor.engine.controller.rolling.RollingUpdate} is a rolling CompositeController's part of a
 * parent's sync, between the claim of its children and their writes: the parent's ControllerRevisions claimed from
 * their informer, one call of the chosen hook per live revision, one {@code Rollout} step, and the revisions written
 * (remembered until the cache shows them, {@link dev.metareactor.engine.controller.rolling.WrittenRevisions}) before
 * any child is. It runs on the work queue's workers and never blocks: its API calls and hook calls are {@code Mono}s.
 * The rest are pure values over JSON trees: no I/O, no threads of their own; safe to use from any thread.
 */
@NullMarked
package dev.metareactor.engine.controller.rolling;

import org.jspecify.annotations.NullMarked;
