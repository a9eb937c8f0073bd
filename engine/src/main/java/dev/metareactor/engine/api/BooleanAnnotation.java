package dev.metareactor.engine.api;

import java.util.Map;

/** A controller object's annotation that is {@code "true"} or {@code "false"}, and off when absent. */
final class BooleanAnnotation {

  private BooleanAnnotation() {}

  /**
   * The annotation's value: {@code false} when absent.
   *
   * @throws InvalidControllerException naming the annotation when its value is neither {@code "true"} nor
   *     {@code "false"}
   */
  static boolean value(Map<String, String> annotations, String key) {
    String value = annotations.get(key);
    if (value == null) {
      return false;
    }
    return switch (value.strip()) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new InvalidControllerException("metadata.annotations[" + key + "]: must be \"true\" or"
          + " \"false\", got \"" + value + "\"");
    };
  }
}
