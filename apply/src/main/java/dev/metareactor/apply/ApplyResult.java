package dev.metareactor.apply;

import java.util.Objects;
import tools.jackson.databind.node.ObjectNode;

/**
 * What {@link DynamicApply} decided.
 *
 * @param changed whether {@code object} differs from the observed object, so that a write is needed (always
 *     {@code true} for a create)
 * @param object the complete object the engine would write: the merged object for an update, or the desired
 *     object with its last-applied annotation for a create. When nothing changed this is the observed object
 *     itself, not a copy; callers must not mutate it.
 */
public record ApplyResult(boolean changed, ObjectNode object) {
  public ApplyResult {
    Objects.requireNonNull(object, "object");
  }
}
