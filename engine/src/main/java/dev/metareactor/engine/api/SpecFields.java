package dev.metareactor.engine.api;

import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Reading the fields controller objects share ({@code CompositeController}, {@code DecoratorController}, ...): every
 * problem is an {@link InvalidControllerException} naming the field.
 */
final class SpecFields {

  /** A controller's hooks, at least one of sync and finalize defined. */
  record Hooks(Optional<HookSpec> syncHook, Optional<HookSpec> finalizeHook, Optional<HookSpec> customizeHook) {}

  private SpecFields() {}

  /** The {@code spec} of a controller object (and its {@code metadata.name} must be there). */
  static JsonNode spec(JsonNode controller) {
    text(controller.path("metadata").get("name"), "metadata.name");
    JsonNode spec = controller.get("spec");
    if (spec == null || !spec.isObject()) {
      throw new InvalidControllerException("spec: required");
    }
    return spec;
  }

  static String name(JsonNode controller) {
    return text(controller.path("metadata").get("name"), "metadata.name");
  }

  /** {@code spec.parentResource}: the node (required), its resource and its {@code labelSelector}. */
  record Parent(JsonNode node, ResourceRule resource, LabelSelector selector) {}

  static Parent parent(JsonNode spec) {
    JsonNode node = spec.get("parentResource");
    if (node == null || !node.isObject()) {
      throw new InvalidControllerException("spec.parentResource: required");
    }
    return new Parent(node, resourceRule(node, "spec.parentResource"),
        selector(node.get("labelSelector"), "spec.parentResource.labelSelector"));
  }

  static ResourceRule resourceRule(@Nullable JsonNode node, String field) {
    if (node == null || !node.isObject()) {
      throw new InvalidControllerException(field + ": must be an object with apiVersion and resource");
    }
    return new ResourceRule(text(node.get("apiVersion"), field + ".apiVersion"),
        text(node.get("resource"), field + ".resource"));
  }

  /** A label selector in the API form; absent means everything. */
  static LabelSelector selector(@Nullable JsonNode node, String field) {
    try {
      return LabelSelector.fromApi(node);
    } catch (IllegalArgumentException e) {
      throw new InvalidControllerException(field + ": " + e.getMessage());
    }
  }

  /**
   * A list of child rules ({@code childResources}, {@code attachments}), each listed once.
   *
   * @param refuseRolling whether rolling update methods are refused (only a CompositeController's children roll)
   */
  static List<ChildResourceRule> childRules(@Nullable JsonNode nodes, String field, boolean refuseRolling) {
    Set<ResourceRule> seen = new HashSet<>();
    return list(nodes, field, (node, itemField) -> {
      ResourceRule rule = resourceRule(node, itemField);
      if (!seen.add(rule)) {
        throw new InvalidControllerException(itemField + ": " + rule + " is listed twice");
      }
      String methodField = itemField + ".updateStrategy.method";
      UpdateMethod method = UpdateMethod.parse(optionalText(node.path("updateStrategy").get("method"), methodField),
          methodField);
      if (refuseRolling && method.rolling()) {
        // Applying a rolling method all at once could take every child down together: refuse it instead.
        throw new InvalidControllerException(methodField + ": " + method
            + " is not supported here (only a CompositeController's children roll across ControllerRevisions); use "
            + (method.recreate() ? "Recreate" : "InPlace") + " to update all changed children at once");
      }
      List<StatusCheck> checks =
          statusChecks(node.path("updateStrategy").get("statusChecks"), itemField + ".updateStrategy.statusChecks");
      boolean ignoreStatusChanges = bool(node.get("ignoreStatusChanges"), itemField + ".ignoreStatusChanges");
      if (ignoreStatusChanges && (!checks.isEmpty() || method.rolling())) {
        // Both read the children's status (a rollout waits for status.observedGeneration too): ignoring its changes
        // would leave a rollout or the ordered children waiting for the next resync.
        throw new InvalidControllerException(itemField + ".ignoreStatusChanges: cannot be true while "
            + (checks.isEmpty() ? methodField + " " + method : itemField + ".updateStrategy.statusChecks")
            + " waits for the status of these objects");
      }
      return new ChildResourceRule(rule, method, checks, ignoreStatusChanges);
    });
  }

  /**
   * A list field: absent or {@code null} is empty, anything but a list an error; each item read by {@code item}
   * with its field name ({@code field[i]}).
   */
  static <T> List<T> list(@Nullable JsonNode nodes, String field, BiFunction<JsonNode, String, T> item) {
    if (nodes == null || nodes.isNull()) {
      return List.of();
    }
    if (!nodes.isArray()) {
      throw new InvalidControllerException(field + ": must be a list");
    }
    List<T> items = new ArrayList<>(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      items.add(item.apply(nodes.get(i), field + "[" + i + "]"));
    }
    return items;
  }

  /** {@code updateStrategy.statusChecks}: its {@code conditions}, each with a {@code type}. */
  static List<StatusCheck> statusChecks(@Nullable JsonNode node, String field) {
    if (node == null || node.isNull()) {
      return List.of();
    }
    if (!node.isObject()) {
      throw new InvalidControllerException(field + ": must be an object");
    }
    return list(node.get("conditions"), field + ".conditions", (condition, itemField) -> {
      if (!condition.isObject()) {
        throw new InvalidControllerException(itemField + ": must be an object with a type");
      }
      return new StatusCheck(text(condition.get("type"), itemField + ".type"),
          optionalText(condition.get("status"), itemField + ".status"),
          optionalText(condition.get("reason"), itemField + ".reason"));
    });
  }

  static Hooks hooks(JsonNode spec) {
    JsonNode hooks = spec.get("hooks");
    if (hooks == null || !hooks.isObject()) {
      throw new InvalidControllerException("spec.hooks: no hooks defined");
    }
    Optional<HookSpec> sync = hook(hooks, "sync");
    Optional<HookSpec> finalize = hook(hooks, "finalize");
    if (sync.isEmpty() && finalize.isEmpty()) {
      throw new InvalidControllerException("spec.hooks: neither a sync nor a finalize hook is defined");
    }
    return new Hooks(sync, finalize, hook(hooks, "customize"));
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
    JsonNode cel = hook.get("cel");
    boolean hasWebhook = webhook != null && !webhook.isNull();
    boolean hasCel = cel != null && !cel.isNull();
    if (hasWebhook && hasCel) {
      throw new InvalidControllerException(field + ": webhook and cel are mutually exclusive; set one");
    }
    if (!hasWebhook && !hasCel) {
      return Optional.empty(); // a hook without a webhook is disabled, as upstream
    }
    if (hasWebhook && !webhook.isObject()) {
      throw new InvalidControllerException(field + ".webhook: must be an object");
    }
    if (hasCel && !cel.isObject()) {
      throw new InvalidControllerException(field + ".cel: must be an object with an expression");
    }
    HookSpec.HookVersion version = HookSpec.HookVersion.parse(optionalText(hook.get("version"), field + ".version"),
        field + ".version");
    return Optional.of(hasCel ? HookSpec.cel(version, cel) : new HookSpec(version, webhook));
  }

  static int resyncPeriodSeconds(JsonNode spec) {
    JsonNode resync = spec.get("resyncPeriodSeconds");
    if (resync == null || resync.isNull()) {
      return 0;
    }
    if (!resync.isIntegralNumber() || !resync.canConvertToInt() || resync.intValue() < 0) {
      throw new InvalidControllerException("spec.resyncPeriodSeconds: must be a non-negative integer");
    }
    return resync.intValue();
  }

  /** A required string: present, a string and not empty. */
  static String text(@Nullable JsonNode node, String field) {
    String text = optionalText(node, field);
    if (text == null) {
      throw new InvalidControllerException(field + ": required");
    }
    if (text.isEmpty()) {
      throw new InvalidControllerException(field + ": must not be empty");
    }
    return text;
  }

  /** An optional string: null when absent or null, else it must be a string (which may be empty). */
  static @Nullable String optionalText(@Nullable JsonNode node, String field) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.isString()) {
      throw new InvalidControllerException(field + ": must be a string");
    }
    return node.stringValue();
  }

  static boolean bool(@Nullable JsonNode node, String field) {
    if (node == null || node.isNull()) {
      return false;
    }
    if (!node.isBoolean()) {
      throw new InvalidControllerException(field + ": must be true or false");
    }
    return node.booleanValue();
  }
}
