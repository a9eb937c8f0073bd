package dev.metareactor.engine.api;

import dev.metareactor.engine.selector.LabelSelector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * A MapController object's spec, parsed and validated; any problem is an {@link InvalidControllerException} naming
 * the field (a {@code CreateError} Event on the object, and nothing else happens).
 *
 * @param name the MapController's name
 * @param parent {@code spec.parentResource}
 * @param parentSelector {@code spec.parentResource.labelSelector} (everything when absent)
 * @param inputs {@code spec.inputResources}: whose objects are mapped, one or more
 * @param outputs {@code spec.outputResources}: what the map hook may ask for, one or more (rolling update methods
 *     are refused: outputs are independent of each other)
 * @param mapHook {@code spec.hooks.map}
 * @param tombstoneHook {@code spec.hooks.tombstone}: which outputs of a detached input to keep (none: delete them)
 * @param resyncPeriodSeconds {@code spec.resyncPeriodSeconds}, 0 when absent
 * @param endpointConfigs {@code spec.endpointConfigs} as written (may be a missing node)
 */
public record MapControllerSpec(
    String name,
    ResourceRule parent,
    LabelSelector parentSelector,
    List<ResourceRule> inputs,
    List<ChildResourceRule> outputs,
    HookSpec mapHook,
    Optional<HookSpec> tombstoneHook,
    int resyncPeriodSeconds,
    JsonNode endpointConfigs) implements ControllerSpec {

  /** The controller objects' kind. */
  public static final String KIND = "MapController";

  public MapControllerSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(parent, "parent");
    Objects.requireNonNull(parentSelector, "parentSelector");
    inputs = List.copyOf(inputs);
    outputs = List.copyOf(outputs);
    Objects.requireNonNull(mapHook, "mapHook");
    Objects.requireNonNull(tombstoneHook, "tombstoneHook");
    Objects.requireNonNull(endpointConfigs, "endpointConfigs");
  }

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public Map<String, Optional<HookSpec>> hooksByName() {
    Map<String, Optional<HookSpec>> hooks = new LinkedHashMap<>();
    hooks.put("map", Optional.of(mapHook));
    hooks.put("tombstone", tombstoneHook);
    return hooks;
  }

  /** Parses a whole MapController object ({@code metadata.name} and {@code spec}). */
  public static MapControllerSpec parse(JsonNode controller) {
    JsonNode spec = SpecFields.spec(controller);
    SpecFields.Parent parent = SpecFields.parent(spec);
    List<ResourceRule> inputs = inputRules(spec.get("inputResources"));
    List<ChildResourceRule> outputs = SpecFields.childRules(spec.get("outputResources"), "spec.outputResources", true);
    if (outputs.isEmpty()) {
      throw new InvalidControllerException("spec.outputResources: at least one resource is required");
    }
    for (int i = 0; i < outputs.size(); i++) {
      if (outputs.get(i).ignoreStatusChanges()) {
        throw new InvalidControllerException("spec.outputResources[" + i + "].ignoreStatusChanges: not supported"
            + " here: a change of an output's status alone never calls a hook, it only recounts the parent's status");
      }
    }
    JsonNode hooks = spec.get("hooks");
    if (hooks == null || !hooks.isObject()) {
      throw new InvalidControllerException("spec.hooks: no hooks defined");
    }
    HookSpec map = SpecFields.hook(hooks, "map")
        .orElseThrow(() -> new InvalidControllerException("spec.hooks.map: required"));
    return new MapControllerSpec(SpecFields.name(controller), parent.resource(), parent.selector(), inputs, outputs,
        map,
        SpecFields.hook(hooks, "tombstone"), SpecFields.resyncPeriodSeconds(spec), spec.path("endpointConfigs"));
  }

  private static List<ResourceRule> inputRules(@Nullable JsonNode nodes) {
    String field = "spec.inputResources";
    if (nodes == null || !nodes.isArray() || nodes.isEmpty()) {
      throw new InvalidControllerException(field + ": at least one resource is required");
    }
    List<ResourceRule> rules = new ArrayList<>();
    Set<ResourceRule> seen = new HashSet<>();
    for (int i = 0; i < nodes.size(); i++) {
      ResourceRule rule = SpecFields.resourceRule(nodes.get(i), field + "[" + i + "]");
      if (!seen.add(rule)) {
        throw new InvalidControllerException(field + "[" + i + "]: " + rule + " is listed twice");
      }
      rules.add(rule);
    }
    return rules;
  }
}
