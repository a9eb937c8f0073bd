package dev.metareactor.engine.api;

import java.util.Map;

/**
 * {@code metareactor.dev/record-syncs: "true"} on a controller object: with {@code --record-syncs DIR}, each of its
 * syncs is recorded under DIR (see {@code controller/SyncRecorder}). A change restarts the controller, as a change of
 * its spec does.
 */
public final class RecordSyncsAnnotation {

  /** The annotation's key. */
  public static final String KEY = "metareactor.dev/record-syncs";

  private RecordSyncsAnnotation() {}

  /**
   * Whether the object asks for its syncs to be recorded.
   *
   * @throws InvalidControllerException naming the annotation when its value is neither {@code true} nor
   *     {@code false}
   */
  public static boolean enabled(Map<String, String> annotations) {
    return BooleanAnnotation.value(annotations, KEY);
  }
}
