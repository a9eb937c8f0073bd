package dev.metareactor.engine.api;

import java.util.Map;

/**
 * {@code metareactor.dev/write-child-status: "true"} on a CompositeController or DecoratorController: the
 * {@code status} a sync answer gives a desired child (an attachment) is written to that object's status subresource,
 * where its type has one (upstream's #766). Without it (or with {@code "false"}) such a status is dropped, as
 * Metacontroller drops it: a hook's answer that writes no status today writes none after an upgrade. A change of the
 * annotation restarts the controller, as a change of its spec does.
 */
public final class ChildStatusAnnotation {

  /** The annotation's key. */
  public static final String KEY = "metareactor.dev/write-child-status";

  private ChildStatusAnnotation() {}

  /**
   * Whether the controller writes the status its sync answers give children and attachments.
   *
   * @param annotations the controller object's annotations
   * @throws InvalidControllerException naming the annotation when its value is neither {@code "true"} nor
   *     {@code "false"}
   */
  public static boolean enabled(Map<String, String> annotations) {
    return BooleanAnnotation.value(annotations, KEY);
  }
}
