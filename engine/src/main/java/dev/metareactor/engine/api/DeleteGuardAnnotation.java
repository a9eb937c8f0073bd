package dev.metareactor.engine.api;

import java.util.Map;

/**
 * {@code metareactor.dev/delete-guard} on a controller object: {@code "true"} refuses, as a {@code SyncError} with
 * nothing written, a sync (or map) answer that would delete owned objects by mistake rather than by intent:
 *
 * <ul>
 *   <li>one without its children field ({@code children}, {@code attachments}, {@code outputs}: absent or
 *       {@code null}, not {@code []}) while the object has live owned objects;</li>
 *   <li>one that would delete more than half of the object's live owned objects at once, and more than one.</li>
 * </ul>
 *
 * <p>Without it (or with {@code "false"}), such answers are followed as Metacontroller follows them, and the first kind
 * gets a {@code MissingChildren} Warning. A change of the annotation restarts the controller, as a change of its spec
 * does.
 */
public final class DeleteGuardAnnotation {

  /** The annotation's key. */
  public static final String KEY = "metareactor.dev/delete-guard";

  private DeleteGuardAnnotation() {}

  /**
   * Whether the controller's delete guard is on.
   *
   * @param annotations the controller object's annotations
   * @throws InvalidControllerException naming the annotation when its value is neither {@code "true"} nor
   *     {@code "false"}
   */
  public static boolean enabled(Map<String, String> annotations) {
    return BooleanAnnotation.value(annotations, KEY);
  }
}
