package dev.metareactor.engine.controller.related;

import dev.metareactor.engine.api.HookSpec.HookVersion;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * A related rule as it applies to one parent: the resource it names, as discovery serves it, and the namespace it
 * reads from.
 *
 * <p>Where a rule reads, as upstream v4.17.2 does (docs/composite-controller.md, "Related objects", has the whole
 * table): a rule without {@code namespace} reads every namespace, except that a {@code v1} customize hook of a
 * namespaced parent reads only the parent's namespace and may name no other (for a namespaced resource); a rule with
 * {@code namespace} reads that namespace ({@code *}, every namespace, is ours: upstream reads a namespace named
 * {@code *}); {@code namespaceSelector} reads the namespaces whose labels it matches and needs a namespaced resource
 * and, for a namespaced parent, a {@code v2} customize hook. Cluster-scoped resources are read whole. What a {@code v1}
 * sync or finalize request of a namespaced parent then shows is narrowed to the parent's namespace by
 * {@link #visibleTo}, whatever the customize hook read.
 *
 * @param resource the related resource
 * @param rule the rule
 * @param scope the namespace objects are read from; {@code ""} for every namespace, or a cluster-scoped resource
 */
public record ResolvedRule(ApiResource resource, RelatedRule rule, String scope) {

  public ResolvedRule {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(scope, "scope");
  }

  /**
   * Resolves {@code rule} for a parent.
   *
   * @param parentNamespace the parent's namespace, {@code ""} if it is cluster-scoped
   * @throws HookResponseException when the rule reaches where this parent may not read
   */
  public static ResolvedRule resolve(RelatedRule rule, ApiResource resource, String parentNamespace,
      HookVersion version) {
    boolean v1OfNamespacedParent = !parentNamespace.isEmpty() && version == HookVersion.V1;
    if (!resource.namespaced()) {
      if (rule.selection() == RelatedRule.Selection.NAMESPACE_SELECTOR) {
        throw new HookResponseException("relatedResources: namespaceSelector needs a namespaced resource; "
            + resource + " is cluster-scoped");
      }
      return new ResolvedRule(resource, rule, "");
    }
    String scope = switch (rule.selection()) {
      case LABELS -> v1OfNamespacedParent ? parentNamespace : "";
      case NAMESPACE_SELECTOR -> {
        if (v1OfNamespacedParent) {
          throw new HookResponseException("namespaceSelector is not supported for namespaced parent in v1 hook "
              + "version");
        }
        yield "";
      }
      case NAMESPACE_AND_LABELS, NAMESPACES_AND_NAMES -> {
        String requested = rule.namespace();
        if (requested == null) {
          yield v1OfNamespacedParent ? parentNamespace : "";
        }
        if (requested.equals(RelatedRule.ANY_NAMESPACE)) {
          yield "";
        }
        if (v1OfNamespacedParent && !requested.equals(parentNamespace)) {
          throw new HookResponseException("requested related object namespace " + requested
              + " differs from parent object namespace " + parentNamespace);
        }
        yield requested;
      }
    };
    return new ResolvedRule(resource, rule, scope);
  }

  /**
   * Whether a sync or finalize request shows a related object: a {@code v1} request of a namespaced parent keys
   * objects by name alone, so it shows only those of the parent's namespace (upstream drops the others, cluster-scoped
   * objects included, however the customize hook read them); every other request shows everything read.
   *
   * @param parentNamespace the parent's namespace, {@code ""} if it is cluster-scoped
   * @param requestVersion the version of the hook the request is for
   */
  public static boolean visibleTo(KubeObject object, String parentNamespace, HookVersion requestVersion) {
    return parentNamespace.isEmpty() || requestVersion != HookVersion.V1
        || parentNamespace.equals(object.namespace());
  }

  /**
   * Whether the rule selects {@code object} (of {@link #resource}).
   *
   * @param namespaceLabels the labels of a namespace, for {@code namespaceSelector} rules
   */
  public boolean selects(KubeObject object, Function<String, Map<String, String>> namespaceLabels) {
    String namespace = object.namespace();
    if (!scope.isEmpty() && !scope.equals(namespace)) {
      return false;
    }
    if (!rule.names().isEmpty() && !rule.names().contains(object.name())) {
      return false;
    }
    if (!rule.labels().matches(object.labels())) {
      return false;
    }
    return rule.selection() != RelatedRule.Selection.NAMESPACE_SELECTOR
        || Objects.requireNonNull(rule.namespaces(), "a namespaceSelector rule has one")
            .matches(namespaceLabels.apply(namespace));
  }
}
