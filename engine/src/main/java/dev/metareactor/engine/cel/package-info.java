/**
 * CEL hooks: a hook written as a CEL expression ({@code hooks.<name>.cel.expression}) that the engine compiles when
 * the controller object is applied and evaluates itself, instead of calling a webhook.
 *
 * <p>The expression reads the hook request a webhook would get, field by field ({@code controller}, {@code parent},
 * {@code object}, {@code children}, {@code attachments}, {@code outputs}, {@code related}, {@code finalizing},
 * {@code input}, {@code mapKey}: one its request has not is {@code null}) and whole ({@code request}), in the same
 * shapes as the JSON; its value is the answer (an object, the same fields a webhook answers).
 *
 * <p>Functions: CEL's standard ones and macros ({@code has}, {@code all}, {@code exists}, {@code map},
 * {@code filter}), cel-java's extensions {@code strings} ({@code split}, {@code join}, {@code replace},
 * {@code lowerAscii}...), {@code encoders} ({@code base64.encode}, {@code base64.decode}), {@code math},
 * {@code lists} (without {@code lists.range}), {@code sets}, {@code bindings} ({@code cel.bind}) and optionals
 * ({@code parent.?spec.?size.orValue(1)}), and the engine's own {@link dev.metareactor.engine.cel.CelHelpers}:
 * {@code "%s-%d".format([...])}, {@code sha256(value)}, {@code toJson(value)}, {@code merge(base, overlay)}.
 *
 * <p>Bounded ({@link dev.metareactor.engine.cel.CelLimits}): every evaluation has a cost limit and a timeout, and
 * each comprehension at most {@code 100,000} iterations; one over them fails with a reason, as a failed webhook call.
 */
@NullMarked
package dev.metareactor.engine.cel;

import org.jspecify.annotations.NullMarked;
