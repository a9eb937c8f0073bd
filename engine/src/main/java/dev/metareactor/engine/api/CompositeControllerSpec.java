package dev.metareactor.engine.api;

import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A CompositeController object's spec, parsed and validated. Parsing never half-succeeds: any problem is an
 * {@link InvalidControllerException} naming the field, which the engine reports as a {@code CreateError} event on
 * the controller object (and the controller is not started).
 *
 * @param name the CompositeController's name
 * @param parent {@code spec.parentResource}
 * @param parentSelector {@code spec.parentResource.labelSelector} (everything when absent)
 * @param ignoreStatusChanges {@code spec.parentResource.ignoreStatusChanges}
 * @param children {@code spec.childResources}
 * @param syncHook {@code spec.hooks.sync}
 * @param finalizeHook {@code spec.hooks.finalize}
 * @param customizeHook {@code spec.hooks.customize}
 * @param resyncPeriodSeconds {@code spec.resyncPeriodSeconds}, 0 when absent
 * @param generateSelector {@code spec.generateSelector}
 * @param endpointConfigs {@code spec.endpointConfigs} as written (may be a missing node)
 */
public record CompositeControllerSpec(
    String name,
    ResourceRule parent,
    LabelSelector parentSelector,
    boolean ignoreStatusChanges,
    List<ChildResourceRule> children,
    Optional<HookSpec> syncHook,
    Optional<HookSpec> finalizeHook,
    Optional<HookSpec> customizeHook,
    int resyncPeriodSeconds,
    boolean generateSelector,
    JsonNode endpointConfigs) {

  public CompositeControllerSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(parent, "parent");
    Objects.requireNonNull(parentSelector, "parentSelector");
    children = List.copyOf(children);
    Objects.requireNonNull(syncHook, "syncHook");
    Objects.requireNonNull(finalizeHook, "finalizeHook");
    Objects.requireNonNull(customizeHook, "customizeHook");
    Objects.requireNonNull(endpointConfigs, "endpointConfigs");
  }

  /** The finalizer this controller puts on parents when it has a finalize hook. */
  public String finalizerName() {
    return "metacontroller.io/compositecontroller-" + name;
  }

  /** Parses a whole CompositeController object ({@code metadata.name} and {@code spec}). */
  public static CompositeControllerSpec parse(JsonNode controller) {
    String name = text(controller.path("metadata").get("name"), "metadata.name", true);
    JsonNode spec = controller.get("spec");
    if (spec == null || !spec.isObject()) {
      throw new InvalidControllerException("spec: required");
    }
    JsonNode parentNode = spec.get("parentResource");
    if (parentNode == null || !parentNode.isObject()) {
      throw new InvalidControllerException("spec.parentResource: required");
    }
    ResourceRule parent = resourceRule(parentNode, "spec.parentResource");
    LabelSelector parentSelector;
    try {
      parentSelector = LabelSelector.fromApi(parentNode.get("labelSelector"));
    } catch (IllegalArgumentException e) {
      throw new InvalidControllerException("spec.parentResource.labelSelector: " + e.getMessage());
    }
    boolean ignoreStatusChanges = bool(parentNode.get("ignoreStatusChanges"), "spec.parentResource.ignoreStatusChanges");

    List<ChildResourceRule> children = new ArrayList<>();
    JsonNode childNodes = spec.get("childResources");
    if (childNodes != null && !childNodes.isNull()) {
      if (!childNodes.isArray()) {
        throw new InvalidControllerException("spec.childResources: must be a list");
      }
      Set<ResourceRule> seen = new HashSet<>();
      for (int i = 0; i < childNodes.size(); i++) {
        String field = "spec.childResources[" + i + "]";
        JsonNode child = childNodes.get(i);
        ResourceRule rule = resourceRule(child, field);
        if (!seen.add(rule)) {
          throw new InvalidControllerException(field + ": " + rule + " is listed twice");
        }
        String method = text(child.path("updateStrategy").get("method"), field + ".updateStrategy.method", false);
        UpdateMethod updateMethod = UpdateMethod.parse(method, field + ".updateStrategy.method");
        if (updateMethod.rolling()) {
          // Applying a rolling method all at once could take every child down together: refuse it instead.
          throw new InvalidControllerException(field + ".updateStrategy.method: " + updateMethod
              + " is not supported yet (rolling updates with ControllerRevisions are planned); use "
              + (updateMethod.recreate() ? "Recreate" : "InPlace") + " to update all changed children at once");
        }
        children.add(new ChildResourceRule(rule, updateMethod));
      }
    }

    JsonNode hooks = spec.get("hooks");
    if (hooks == null || !hooks.isObject()) {
      throw new InvalidControllerException("spec.hooks: no hooks defined");
    }
    Optional<HookSpec> sync = hook(hooks, "sync");
    Optional<HookSpec> finalize = hook(hooks, "finalize");
    if (sync.isEmpty() && finalize.isEmpty()) {
      throw new InvalidControllerException("spec.hooks: neither a sync nor a finalize hook is defined");
    }
    JsonNode resync = spec.get("resyncPeriodSeconds");
    int resyncPeriodSeconds = 0;
    if (resync != null && !resync.isNull()) {
      if (!resync.isIntegralNumber() || !resync.canConvertToInt() || resync.intValue() < 0) {
        throw new InvalidControllerException("spec.resyncPeriodSeconds: must be a non-negative integer");
      }
      resyncPeriodSeconds = resync.intValue();
    }
    return new CompositeControllerSpec(name, parent, parentSelector, ignoreStatusChanges, children, sync, finalize,
        hook(hooks, "customize"), resyncPeriodSeconds, bool(spec.get("generateSelector"), "spec.generateSelector"),
        spec.path("endpointConfigs"));
  }

  static ResourceRule resourceRule(JsonNode node, String field) {
    if (node == null || !node.isObject()) {
      throw new InvalidControllerException(field + ": must be an object with apiVersion and resource");
    }
    return new ResourceRule(text(node.get("apiVersion"), field + ".apiVersion", true),
        text(node.get("resource"), field + ".resource", true));
  }

  static Optional<HookSpec> hook(JsonNode hooks, String name) {
    JsonNode hook = hooks.get(name);
    if (hook == null || hook.isNull()) {
      return Optional.empty();
    }
    String field = "spec.hooks." + name;
    if (!hook.isObject()) {
      throw new InvalidControllerException(field + ": must be an object");
    }
    JsonNode webhook = hook.get("webhook");
    if (webhook == null || webhook.isNull()) {
      return Optional.empty(); // a hook without a webhook is disabled, as upstream
    }
    if (!webhook.isObject()) {
      throw new InvalidControllerException(field + ".webhook: must be an object");
    }
    HookSpec.HookVersion version = HookSpec.HookVersion.parse(text(hook.get("version"), field + ".version", false),
        field + ".version");
    return Optional.of(new HookSpec(version, webhook));
  }

  static String text(JsonNode node, String field, boolean required) {
    if (node == null || node.isNull()) {
      if (required) {
        throw new InvalidControllerException(field + ": required");
      }
      return null;
    }
    if (!node.isString()) {
      throw new InvalidControllerException(field + ": must be a string");
    }
    if (required && node.stringValue().isEmpty()) {
      throw new InvalidControllerException(field + ": must not be empty");
    }
    return node.stringValue();
  }

  static boolean bool(JsonNode node, String field) {
    if (node == null || node.isNull()) {
      return false;
    }
    if (!node.isBoolean()) {
      throw new InvalidControllerException(field + ": must be true or false");
    }
    return node.booleanValue();
  }
}
