/**
 * OpenTelemetry traces of syncs ({@code --tracing}): the SDK's life ({@link dev.metareactor.engine.tracing.Tracing},
 * configured from the {@code OTEL_*} environment), a sync's place in its trace carried through its Reactor pipeline
 * ({@link dev.metareactor.engine.tracing.SyncTrace}), and the spans of the API writes a sync makes ({@link
 * dev.metareactor.engine.tracing.TracingObjectApi}).
 *
 * <h2>The spans of one sync</h2>
 *
 * <ul>
 *   <li>{@code sync <controller>} (the root, made by the controller's {@code SyncRunner}): the controller's kind and
 *   name, the key's namespace and name, the outcome, how long the key waited in the work queue ({@code
 *   metareactor.queue.wait_ms}) and why it was queued ({@link dev.metareactor.engine.tracing.SyncCauses}).</li>
 *   <li>{@code hook <hook>} ({@code hook/WebhookCaller}, {@code CLIENT}): each hook call (sync, finalize, customize,
 *   map, tombstone), its endpoint, whether the answer came from the ETag cache, the attempts it took. The request
 *   carries W3C {@code traceparent}/{@code tracestate} headers naming this span, so the hook's own spans nest under
 *   it.</li>
 *   <li>{@code <verb> <Kind>} ({@link dev.metareactor.engine.tracing.TracingObjectApi}, {@code CLIENT}): each API
 *   write, its verb, the object's kind, namespace and name, and the HTTP code of a refusal.</li>
 *   <li>{@code write status} ({@code controller/StatusWriter}): the status write, around its {@code status <Kind>}
 *   write.</li>
 * </ul>
 *
 * <h2>Threads and cost</h2>
 *
 * <p>Nothing here is ever made current on a thread ({@code Context.makeCurrent}): a span's parent travels in the
 * Reactor context of the sync's pipeline, so it follows the pipeline across event loops and schedulers and never
 * leaks into another sync on the same thread. With tracing off no span, attribute or header is made: the runner
 * puts no {@code SyncTrace} in the context, the writes are not wrapped, and a hook call finds nothing in a context it
 * reads anyway.
 */
@NullMarked
package dev.metareactor.engine.tracing;

import org.jspecify.annotations.NullMarked;
