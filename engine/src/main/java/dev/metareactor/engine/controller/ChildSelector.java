package dev.metareactor.engine.controller;

import dev.metareactor.engine.selector.LabelSelector;
import dev.metareactor.engine.selector.Requirement;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
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
   * @param json converts the selector to a JSON tree
   * @throws InvalidSelectorException with upstream's message when {@code spec.selector} is missing, empty or
   *     malformed
   */
  public static LabelSelector of(GenericKubernetesResource parent, boolean generate, KubernetesSerialization json) {
    if (generate) {
      return new LabelSelector(List.of(Requirement.in(CONTROLLER_UID_LABEL, parent.getMetadata().getUid())));
    }
    Object spec = parent.getAdditionalProperties().get("spec");
    Object selector = spec instanceof Map<?, ?> map ? map.get("selector") : null;
    LabelSelector parsed;
    try {
      parsed = selector == null ? LabelSelector.everything()
          : LabelSelector.fromApi(json.convertValue(selector, JsonNode.class));
    } catch (IllegalArgumentException e) {
      throw new InvalidSelectorException("can't get label selector from " + parent.getKind() + " "
          + describe(parent) + ": " + e.getMessage());
    }
    if (parsed.isEmpty()) {
      throw new InvalidSelectorException(".spec.selector must have either matchLabels, matchExpressions, or both");
    }
    return parsed;
  }

  private static String describe(GenericKubernetesResource object) {
    String namespace = object.getMetadata().getNamespace();
    return (namespace == null || namespace.isEmpty() ? "" : namespace + "/") + object.getMetadata().getName();
  }

  /** A parent whose selector cannot be used: its sync fails with this message (a {@code SyncError} Event). */
  public static final class InvalidSelectorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InvalidSelectorException(String message) {
      super(message);
    }
  }
}
