/**
 * Metareactor's apply engine: the pure function that decides what the engine writes to a child object.
 *
 * <p>It reproduces Metacontroller's "dynamic apply" (a client-side emulation of {@code kubectl apply} that
 * needs no schema): a three-way merge of the observed object, the last configuration the controller applied
 * and the newly desired configuration, with associative lists detected by convention, system metadata and
 * {@code status} left as observed, and the desired configuration recorded in the
 * {@value dev.metareactor.apply.LastAppliedConfiguration#ANNOTATION} annotation, serialized byte for byte as
 * Go's {@code encoding/json} does so that a cluster migrated from Metacontroller sees no spurious update.
 *
 * <p>Entry points: {@link dev.metareactor.apply.DynamicApply}; for {@code --apply-strategy=server-side-apply},
 * {@link dev.metareactor.apply.ServerSideApply} (whether an apply would change anything, read from the field manager's
 * {@link dev.metareactor.apply.FieldSet}) and {@link dev.metareactor.apply.OwnershipHandover} (a child dynamic apply
 * wrote, handed over to server-side apply). Everything here works on Jackson 3
 * {@link tools.jackson.databind.JsonNode} trees; there is no Kubernetes client, no Reactor and no I/O. All classes
 * are stateless and thread-safe. Every package is {@code @NullMarked}, checked by NullAway when the module compiles.
 */
@NullMarked
package dev.metareactor.apply;

import org.jspecify.annotations.NullMarked;
