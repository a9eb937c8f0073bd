package dev.metareactor.engine.api;

import dev.metareactor.engine.selector.LabelSelector;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
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
 * @param revisionFieldPaths {@code spec.parentResource.revisionHistory.fieldPaths}: the parent fields a rolling
 *     update's ControllerRevisions record, dot-separated; empty when absent (then {@code ["spec"]})
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
    List<String> revisionFieldPaths,
    List<ChildResourceRule> children,
    Optional<HookSpec> syncHook,
    Optional<HookSpec> finalizeHook,
    Optional<HookSpec> customizeHook,
    int resyncPeriodSeconds,
    boolean generateSelector,
    JsonNode endpointConfigs) implements ControllerSpec.WithSyncHooks {

  public CompositeControllerSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(parent, "parent");
    Objects.requireNonNull(parentSelector, "parentSelector");
    revisionFieldPaths = List.copyOf(revisionFieldPaths);
    children = List.copyOf(children);
    Objects.requireNonNull(syncHook, "syncHook");
    Objects.requireNonNull(finalizeHook, "finalizeHook");
    Objects.requireNonNull(customizeHook, "customizeHook");
    Objects.requireNonNull(endpointConfigs, "endpointConfigs");
  }

  /** The controller objects' kind. */
  public static final String KIND = "CompositeController";

  @Override
  public String kind() {
    return KIND;
  }

  /** Parses a whole CompositeController object ({@code metadata.name} and {@code spec}). */
  public static CompositeControllerSpec parse(JsonNode controller) {
    JsonNode spec = SpecFields.spec(controller);
    SpecFields.Parent parent = SpecFields.parent(spec);
    boolean ignoreStatusChanges = SpecFields.bool(parent.node().get("ignoreStatusChanges"),
        "spec.parentResource.ignoreStatusChanges");
    List<ChildResourceRule> children = SpecFields.childRules(spec.get("childResources"), "spec.childResources", false);
    SpecFields.Hooks hooks = SpecFields.hooks(spec);
    return new CompositeControllerSpec(SpecFields.name(controller), parent.resource(), parent.selector(),
        ignoreStatusChanges, fieldPaths(parent.node().path("revisionHistory").get("fieldPaths")), children,
        hooks.syncHook(), hooks.finalizeHook(), hooks.customizeHook(),
        SpecFields.resyncPeriodSeconds(spec),
        SpecFields.bool(spec.get("generateSelector"), "spec.generateSelector"), spec.path("endpointConfigs"));
  }

  private static List<String> fieldPaths(@Nullable JsonNode node) {
    return SpecFields.list(node, "spec.parentResource.revisionHistory.fieldPaths", (item, field) -> {
      String path = SpecFields.text(item, field);
      if (List.of(path.split("\\.", -1)).contains("")) {
        throw new InvalidControllerException(field + ": \"" + path + "\" has an empty segment");
      }
      return path;
    });
  }
}
