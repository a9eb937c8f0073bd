/**
 * What every controller kind shares, and the recipe for a new kind.
 *
 * <h2>The pieces</h2>
 *
 * <ul>
 *   <li>{@link dev.metareactor.engine.controller.AbstractHostedController}: a hosted controller's life — waiting for
 *   its resources ({@link dev.metareactor.engine.controller.ResourceWait}), the work queue, resyncs (spread over
 *   their period by {@link dev.metareactor.engine.controller.ResyncPacer}), stopping and retiring, what it holds
 *   meanwhile ({@link dev.metareactor.engine.controller.Holdings}).</li>
 *   <li>{@link dev.metareactor.engine.controller.Wiring}: what a kind's {@code wire()} is handed to build its sync
 *   from (informers, event routing, hooks, related objects, child types), closed when {@code wire()} returns.</li>
 *   <li>{@link dev.metareactor.engine.controller.SyncRunner}: one sync of one key to the queue's outcome, its
 *   {@code SyncError} Event, log fields and metrics ({@link dev.metareactor.engine.controller.SyncMetrics}).</li>
 *   <li>{@link dev.metareactor.engine.controller.ObjectSync}: the one sync skeleton (finalizer, the chosen hook,
 *   request, answer checked whole, owned objects converged, the kind's own writes, finalizer, outcome), and what a
 *   kind brings to it: a {@link dev.metareactor.engine.controller.Kind} whose {@link
 *   dev.metareactor.engine.controller.Plan} of each sync is a value, a hook's {@link
 *   dev.metareactor.engine.controller.Answer} checked whole, the {@link dev.metareactor.engine.controller.ChosenHook}
 *   with its purpose (desired state, finalize, tear down).</li>
 *   <li>{@link dev.metareactor.engine.controller.SyncedResource}: a resource whose objects a controller syncs, and the
 *   one rule for which of them it is responsible for (selected, or holding its finalizer); ControllerRef routing.</li>
 *   <li>{@link dev.metareactor.engine.controller.ChildClaimer} (adopt and release by selector and ControllerRef),
 *   {@link dev.metareactor.engine.controller.ChildrenManager} (create, update by method, delete, through the
 *   {@link dev.metareactor.engine.controller.apply.ChildApplier} of {@code --apply-strategy}; a create never takes
 *   over an object of the child's name, which is reported as a {@code ChildConflict}),
 *   {@link dev.metareactor.engine.controller.DesiredObjects} (an answer's objects checked whole before any write:
 *   types, namespaces, names and owner references as the API server would take them, no controller but the
 *   owner, the engine's own labels),
 *   {@link dev.metareactor.engine.controller.WrittenChildren} (creates the caches do not show yet),
 *   {@link dev.metareactor.engine.controller.DeleteGuard} (a sync answer that would delete owned objects by mistake:
 *   the {@code MissingChildren} Warning, or refused under {@code metareactor.dev/delete-guard}),
 *   {@link dev.metareactor.engine.controller.HotLoopGuard} (a parent whose syncs make the same write again and again:
 *   the {@code HotLoop} Warning, and its syncs held back; fed by the children manager's writes, asked by the
 *   {@code SyncRunner} before each run),
 *   {@link dev.metareactor.engine.controller.Finalizers},
 *   {@link dev.metareactor.engine.controller.OtherNamespaceChildren} (a namespaced parent's children in other
 *   namespaces, under {@code metareactor.dev/cross-namespace-children}: no ControllerRef but a label, found by the
 *   label index, deleted by the engine under the controller's finalizer).</li>
 *   <li>{@link dev.metareactor.engine.controller.StatusWriter}: the one status write of every kind, a JSON Patch
 *   guarded by the object's UID ({@code test /metadata/uid}, {@code add /status}), sent only when the status differs
 *   from the cached one and from the last one written. Its rule for a refusal is every kind's: <b>404</b> the object
 *   is gone, nothing more is written to it; <b>409</b> passes as it is, the sync runs again without an Event;
 *   <b>422</b> one read decides: gone or replaced by a namesake (the UID test failed) is as a 404, the same object
 *   means the API server refuses the status itself, bad input reported as a {@code SyncError}; anything else fails
 *   the write. A kind builds the status; it never writes one itself.</li>
 *   <li>With {@code --sharding}, a controller's {@link dev.metareactor.engine.shard.ShardParticipant} takes the
 *   synced and owned informers of this replica's share ({@code Wiring.acquireSynced}, {@code acquireOwned}), labels
 *   what it writes, registers with the sharder and moves a parent another shard owns instead of syncing it ({@link
 *   dev.metareactor.engine.controller.ObjectSync.Placement}, {@code shard/ShardMover}).</li>
 * </ul>
 *
 * <h2>Threads</h2>
 *
 * <p>Routers run on the informers' serial workers and only read caches and enqueue, each key with its cause
 * ({@link dev.metareactor.engine.queue.Trigger}: {@code event.trigger()} for the synced object's own event,
 * {@code event.ownedTrigger(child)} for an owned object's, which tells the echo of the engine's own write from a
 * change: {@code Wiring.subscribe} marks the events that show the version a write of the controller made, which
 * {@code OwnWrites} remembers from every write the controller's API answers); the work queue serves changes
 * first, lets the echoes of one sync's writes make one run after it, and hands each run its causes. Syncs run on
 * the work queue's workers and never block: every API call and hook call is a {@code Mono}. {@code wire()} runs
 * once, under the controller's lifecycle lock, on a worker thread; its {@code Wiring} is closed when it returns, so
 * nothing it offers can be used later (a router keeps only the queue it was given).
 *
 * <h2>Hooks</h2>
 *
 * <p>{@code sync}: the desired state of a synced object's owned objects (and the kind's own fields); {@code finalize}:
 * the same while the object is being deleted or no longer selected, until it answers {@code finalized: true}; {@code
 * customize}: which related objects the other two are shown. A kind declares the hooks it has by name; a hook's {@code
 * version} ({@code v1}, {@code v2}) decides how objects are keyed in its requests. What a hook's answer is for is
 * data, its {@link dev.metareactor.engine.controller.ChosenHook.Purpose}, given where the kind takes the hook
 * ({@code Wiring.chosenHook}): only a {@code FINALIZE} hook's requests say {@code finalizing: true} and its {@code
 * finalized: true} lets the finalizer go; only a {@code DESIRED_STATE} answer is held to the delete rules.
 *
 * <h2>Adding a hook field</h2>
 *
 * <p>An answer field is declared once, as an {@link dev.metareactor.engine.hook.AnswerField} (its name and how its
 * value is read and checked), in one {@link dev.metareactor.engine.hook.AnswerFields} list; that list is both what
 * the strict check ({@code v2} hooks, {@code responseUnMarshallMode: strict}) accepts and the only way to read the
 * value ({@code Values.get} refuses a field that is not in the list it was read with), so a field is accepted exactly
 * when it is read:
 *
 * <ul>
 *   <li>shared by every kind: a constant in {@link dev.metareactor.engine.hook.SyncResponse}, listed in its {@code
 *   SHARED} and read into a component of {@code SyncResponse}, all in that one file;</li>
 *   <li>one kind's: a constant in its {@link dev.metareactor.engine.controller.Kind}, listed in its own {@code
 *   AnswerFields} (a DecoratorController's {@code labels} and {@code annotations}), whose {@code names()} make its
 *   {@code Shape}'s {@code otherAnswerFields} and from which its plan reads the values ({@code
 *   OWN_FIELDS.read(body)});</li>
 *   <li>a customize answer's: {@code related/RelatedObjects}' list.</li>
 * </ul>
 *
 * <p>A request field is written in one place and read by no parser of ours: a field every request has in {@code
 * ObjectSync}'s request, a kind's own in its plan ({@code Plan.Call.with}: a MapController's {@code mapKey} and
 * {@code input}). The kind's reference page in {@code docs/} lists both.
 *
 * <h2>Adding a controller kind</h2>
 *
 * <ol>
 *   <li>Its spec: a record in {@code api/} implementing {@link dev.metareactor.engine.api.ControllerSpec} (kind,
 *   name, hooks by name, resync period, endpoint settings; the finalizer name follows), parsed and validated from the
 *   controller object (errors name the field).</li>
 *   <li>Its key: a record implementing {@link dev.metareactor.engine.controller.SyncKey}.</li>
 *   <li>Its router, in its own package {@code controller/<kind>/}: informer events to keys, through {@link
 *   dev.metareactor.engine.controller.SyncedResource#responsibleFor} and {@link
 *   dev.metareactor.engine.controller.SyncedResource#controllerOf}, or an index; never a scan.</li>
 *   <li>Its part of the sync: a {@link dev.metareactor.engine.controller.Kind} (its synced resources, the key of an
 *   object, and a {@link dev.metareactor.engine.controller.Plan} per sync, returned as a value: {@code
 *   Plan.call(synced, owned, Answering.checkedBy(check))} for the hook the object's state chooses, with {@code
 *   calling}, {@code about} and {@code with} for a hook of its own, what the call is about and request fields of its
 *   own, or {@link dev.metareactor.engine.controller.Plan.KeepNothing} when there is no hook to ask; the check
 *   returns the {@link dev.metareactor.engine.controller.Answer}: the owned objects wanted and its own writes, a
 *   status through the controller's {@code StatusWriter}) and its
 *   {@link dev.metareactor.engine.controller.ObjectSync.Shape} (the request's and answer's field names).</li>
 *   <li>Its hosted controller: extends {@link dev.metareactor.engine.controller.AbstractHostedController} with its
 *   spec and lists its resources; its {@code wire(wiring, resources)} takes the informers through the {@link
 *   dev.metareactor.engine.controller.Wiring} ({@code acquireSynced} for what it syncs, {@code childTypes} or
 *   {@code acquireOwned} for what it writes, {@code acquire} for what it only reads), makes its router with
 *   {@code wiring.queue()}, {@code subscribe}s it, and returns {@code wiring.objectSync(kind, shape,
 *   wiring.relatedObjects())}.</li>
 *   <li>Its {@link dev.metareactor.engine.host.ControllerKind}, hosted by a {@link
 *   dev.metareactor.engine.host.ControllerHost} in {@code server/Engine}; its CRD in {@code manifests/production}.</li>
 * </ol>
 */
@NullMarked
package dev.metareactor.engine.controller;

import org.jspecify.annotations.NullMarked;
