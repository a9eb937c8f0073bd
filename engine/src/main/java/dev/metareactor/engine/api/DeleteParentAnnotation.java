package dev.metareactor.engine.api;

import java.util.Map;

/**
 * {@code metareactor.dev/allow-delete-parent: "true"} on a CompositeController: its sync hook may answer
 * {@code deleteParent: true} to have the engine delete the parent once the rest of the answer is written (a parent
 * that is done: a finished job, an expired lease). Without it such an answer is refused whole, so that a hook cannot
 * delete what its controller's owner did not allow it to. A change restarts the controller, as a change of its spec
 * does.
 */
public final class DeleteParentAnnotation {

  /** The annotation's key. */
  public static final String KEY = "metareactor.dev/allow-delete-parent";

  private DeleteParentAnnotation() {}

  /**
   * Whether the controller's hooks may delete their parents.
   *
   * @throws InvalidControllerException naming the annotation when its value is neither {@code "true"} nor
   *     {@code "false"}
   */
  public static boolean allowed(Map<String, String> annotations) {
    return BooleanAnnotation.value(annotations, KEY);
  }
}
