package dev.metareactor.engine.controller;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.LabelSelector;
import dev.metareactor.engine.selector.Requirement;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Which objects a parent claims as its children (ControllerRef rules): the label selector in the parent's
 * {@code spec.selector} (duck-typed, as in Deployment or StatefulSet), or, with {@code generateSelector}, the
 * label {@code controller-uid=<parent uid>} that the engine puts on every child it creates.
 */
public final class ChildSelector {

  /** The label a generated selector selects on, as upstream (and the built-in Job controller). */
  public static final String CONTROLLER_UID_LABEL = "controller-uid";

  private ChildSelector() {}

  /**
   * The selector of {@code parent}. Reads only {@code spec.selector} (cheap enough for informer callbacks).
   *
   * @param generate {@code generateSelector}: ignore {@code spec.selector}, select on the parent's UID
   * @throws InvalidSelectorException with upstream's message when {@code spec.selector} is missing, empty or
   *     malformed
   */
  public static LabelSelector of(KubeObject parent, boolean generate) {
    return of(parent, generate ? null : parent.toTree(), generate);
  }

  /**
   * The same, reading {@code spec.selector} from a tree of the parent the caller already has.
   *
   * @param tree the parent's tree ({@link KubeObject#toTree()}); not read with {@code generate}
   */
  public static LabelSelector of(KubeObject parent, @Nullable JsonNode tree, boolean generate) {
    if (generate) {
      return new LabelSelector(List.of(Requirement.in(CONTROLLER_UID_LABEL, parent.storedUid())));
    }
    JsonNode selector = Objects.requireNonNull(tree, "a tree, without generate").path("spec").get("selector");
    LabelSelector parsed;
    try {
      parsed = selector == null || selector.isNull() ? LabelSelector.everything() : LabelSelector.fromApi(selector);
    } catch (IllegalArgumentException e) {
      throw new InvalidSelectorException("can't get label selector from " + parent.kind() + " "
          + parent.namespacedName() + ": " + e.getMessage());
    }
    if (parsed.isEmpty()) {
      throw new InvalidSelectorException(".spec.selector must have either matchLabels, matchExpressions, or both");
    }
    return parsed;
  }


  /** A parent whose selector cannot be used: its sync fails with this message (a {@code SyncError} Event). */
  public static final class InvalidSelectorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InvalidSelectorException(String message) {
      super(message);
    }
  }
}
