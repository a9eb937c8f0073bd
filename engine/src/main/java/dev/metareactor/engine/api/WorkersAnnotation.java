package dev.metareactor.engine.api;

import java.util.Map;

/**
 * {@code metareactor.dev/workers} on a controller object: how many of its parents (or inputs) sync at once, instead
 * of {@code --workers}. {@code "1"} makes the controller's hook calls strictly sequential, for a hook that cannot
 * take two calls at once (Metacontroller issue #1093). A change of the annotation restarts the controller, as a
 * change of its spec does.
 */
public final class WorkersAnnotation {

  /** The annotation's key. */
  public static final String KEY = "metareactor.dev/workers";
  /** The most workers the annotation may ask for. */
  public static final int MAX = 1024;

  private WorkersAnnotation() {}

  /**
   * The controller's workers.
   *
   * @param annotations the controller object's annotations
   * @param defaultWorkers {@code --workers}, for an object without the annotation
   * @throws InvalidControllerException naming the annotation when its value is not a whole number from 1 to
   *     {@value #MAX}
   */
  public static int workers(Map<String, String> annotations, int defaultWorkers) {
    String value = annotations.get(KEY);
    if (value == null) {
      return defaultWorkers;
    }
    try {
      int workers = Integer.parseInt(value.strip());
      if (workers >= 1 && workers <= MAX) {
        return workers;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new InvalidControllerException("metadata.annotations[" + KEY + "]: must be a whole number from 1 to "
        + MAX + ", got \"" + value + "\"");
  }
}
