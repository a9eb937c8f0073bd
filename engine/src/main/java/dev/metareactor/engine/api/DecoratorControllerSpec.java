package dev.metareactor.engine.api;

import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A DecoratorController object's spec, parsed and validated; any problem is an {@link InvalidControllerException}
 * naming the field (a {@code CreateError} Event on the object).
 *
 * @param name the DecoratorController's name
 * @param targets {@code spec.resources}: the objects to decorate
 * @param attachments {@code spec.attachments}: what the hook may attach to them (rolling update methods behave as
 *     {@code Recreate}/{@code InPlace}, as upstream)
 * @param syncHook {@code spec.hooks.sync}
 * @param finalizeHook {@code spec.hooks.finalize}
 * @param customizeHook {@code spec.hooks.customize}
 * @param resyncPeriodSeconds {@code spec.resyncPeriodSeconds}, 0 when absent
 * @param endpointConfigs {@code spec.endpointConfigs} as written (may be a missing node)
 */
public record DecoratorControllerSpec(
    String name,
    List<Target> targets,
    List<ChildResourceRule> attachments,
    Optional<HookSpec> syncHook,
    Optional<HookSpec> finalizeHook,
    Optional<HookSpec> customizeHook,
    int resyncPeriodSeconds,
    JsonNode endpointConfigs) implements ControllerSpec.WithSyncHooks {

  /**
   * One {@code spec.resources[]} entry: objects of this resource whose labels match {@code labels} and whose
   * annotations match {@code annotations} are decorated.
   *
   * @param resource the resource
   * @param labels {@code labelSelector} (everything when absent)
   * @param annotations {@code annotationSelector} ({@code matchAnnotations}, {@code matchExpressions}) over
   *     annotations (everything when absent)
   * @param ignoreStatusChanges {@code ignoreStatusChanges}
   */
  public record Target(ResourceRule resource, LabelSelector labels, LabelSelector annotations,
      boolean ignoreStatusChanges) {

    public Target {
      Objects.requireNonNull(resource, "resource");
      Objects.requireNonNull(labels, "labels");
      Objects.requireNonNull(annotations, "annotations");
    }
  }

  public DecoratorControllerSpec {
    Objects.requireNonNull(name, "name");
    targets = List.copyOf(targets);
    attachments = List.copyOf(attachments);
    Objects.requireNonNull(syncHook, "syncHook");
    Objects.requireNonNull(finalizeHook, "finalizeHook");
    Objects.requireNonNull(customizeHook, "customizeHook");
    Objects.requireNonNull(endpointConfigs, "endpointConfigs");
  }

  /** The controller objects' kind. */
  public static final String KIND = "DecoratorController";

  @Override
  public String kind() {
    return KIND;
  }

  /** Parses a whole DecoratorController object ({@code metadata.name} and {@code spec}). */
  public static DecoratorControllerSpec parse(JsonNode controller) {
    JsonNode spec = SpecFields.spec(controller);
    JsonNode resources = spec.get("resources");
    if (resources == null || !resources.isArray() || resources.isEmpty()) {
      throw new InvalidControllerException("spec.resources: at least one resource is required");
    }
    List<Target> targets = new ArrayList<>();
    Set<ResourceRule> seen = new HashSet<>();
    for (int i = 0; i < resources.size(); i++) {
      String field = "spec.resources[" + i + "]";
      JsonNode node = resources.get(i);
      ResourceRule rule = SpecFields.resourceRule(node, field);
      if (!seen.add(rule)) {
        throw new InvalidControllerException(field + ": " + rule + " is listed twice");
      }
      targets.add(new Target(rule, SpecFields.selector(node.get("labelSelector"), field + ".labelSelector"),
          annotationSelector(node.get("annotationSelector"), field + ".annotationSelector"),
          SpecFields.bool(node.get("ignoreStatusChanges"), field + ".ignoreStatusChanges")));
    }
    List<ChildResourceRule> attachments = SpecFields.childRules(spec.get("attachments"), "spec.attachments", false);
    SpecFields.Hooks hooks = SpecFields.hooks(spec);
    return new DecoratorControllerSpec(SpecFields.name(controller), targets, attachments, hooks.syncHook(),
        hooks.finalizeHook(), hooks.customizeHook(), SpecFields.resyncPeriodSeconds(spec),
        spec.path("endpointConfigs"));
  }

  /** {@code {matchAnnotations, matchExpressions}}: a label selector evaluated over annotations. */
  private static LabelSelector annotationSelector(@Nullable JsonNode node, String field) {
    if (node == null || node.isNull()) {
      return LabelSelector.everything();
    }
    if (!node.isObject()) {
      throw new InvalidControllerException(field + ": must be an object");
    }
    ObjectNode asLabels = JsonNodeFactory.instance.objectNode();
    if (node.has("matchAnnotations")) {
      asLabels.set("matchLabels", node.get("matchAnnotations"));
    }
    if (node.has("matchExpressions")) {
      asLabels.set("matchExpressions", node.get("matchExpressions"));
    }
    try {
      return LabelSelector.fromApi(asLabels);
    } catch (IllegalArgumentException e) {
      throw new InvalidControllerException(field + ": "
          + Objects.requireNonNull(e.getMessage(), "LabelSelector names the field in its errors")
              .replace("matchLabels", "matchAnnotations"));
    }
  }
}
