package dev.metareactor.engine.controller.related;

import dev.metareactor.engine.api.HookSpec.HookVersion;
import dev.metareactor.engine.discovery.ApiResource;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.KubeObject;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * A related rule as it applies to one parent: the resource it names, as discovery serves it, and the namespace it
 * reads from.
 *
 * <p>Where a rule reads, by upstream's rules: a namespaced parent reads its own namespace unless the rule names
 * another one, which only a {@code v2} customize hook may do (or {@code *}, every namespace); a cluster-scoped
 * parent reads every namespace unless the rule names one; {@code namespaceSelector} reads the namespaces whose
 * labels it matches and needs a namespaced resource (and, for a namespaced parent, a {@code v2} hook); a
 * namespaced parent reads cluster-scoped objects only with a {@code v2} hook.
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
    boolean parentNamespaced = !parentNamespace.isEmpty();
    boolean v1 = version == HookVersion.V1;
    if (!resource.namespaced()) {
      if (rule.selection() == RelatedRule.Selection.NAMESPACE_SELECTOR) {
        throw new HookResponseException("relatedResources: namespaceSelector needs a namespaced resource; "
            + resource + " is cluster-scoped");
      }
      if (parentNamespaced && v1) {
        throw new HookResponseException("relatedResources: a namespaced parent reads cluster-scoped " + resource
            + " only with version v2 of the customize hook");
      }
      return new ResolvedRule(resource, rule, "");
    }
    String own = parentNamespaced ? parentNamespace : "";
    String scope = switch (rule.selection()) {
      case LABELS -> own;
      case NAMESPACE_SELECTOR -> {
        if (parentNamespaced && v1) {
          throw new HookResponseException("relatedResources: namespaceSelector needs version v2 of the customize "
              + "hook for a namespaced parent");
        }
        yield "";
      }
      case NAMESPACE_AND_LABELS, NAMESPACES_AND_NAMES -> {
        String requested = rule.namespace();
        if (requested == null) {
          yield own;
        }
        if (requested.equals(RelatedRule.ANY_NAMESPACE)) {
          yield "";
        }
        if (parentNamespaced && v1 && !requested.equals(parentNamespace)) {
          throw new HookResponseException("requested related object namespace " + requested
              + " differs from parent object namespace " + parentNamespace);
        }
        yield requested;
      }
    };
    return new ResolvedRule(resource, rule, scope);
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
        || rule.namespaces().matches(namespaceLabels.apply(namespace));
  }
}
