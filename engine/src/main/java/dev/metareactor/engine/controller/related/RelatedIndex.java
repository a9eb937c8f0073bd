package dev.metareactor.engine.controller.related;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.SelectorIndex;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Which parents' related rules select an object: the reverse of the customize hook's answers, so that a change to a
 * related object re-syncs exactly the parents that read it — looked up, never found by asking every parent's rules
 * (upstream walks every parent of the controller on every related event).
 *
 * <p>A rule with {@code names} is filed under each {@code namespace/name} it names; a rule that selects by labels
 * is filed in a {@link SelectorIndex} under its namespace (every namespace for {@code ""}); a
 * {@code namespaceSelector} rule, which depends on namespace labels, is kept in a short list checked on every event
 * of its resource. Candidates are then checked with the whole rule.
 *
 * <p>Thread-safe: writes (from syncs) are serialized; lookups (from informer callbacks) do not lock.
 *
 * @param <K> the parents' keys
 */
final class RelatedIndex<K> {

  /** One rule of one parent. */
  private record RuleRef<K>(K parent, int index) {}

  /** The lookup tables of one related resource. */
  private static final class Tables<K> {
    final Map<String, Set<RuleRef<K>>> byName = new ConcurrentHashMap<>();
    final SelectorIndex<RuleRef<K>> byLabels = new SelectorIndex<>();
    final Map<RuleRef<K>, ResolvedRule> byNamespaceLabels = new ConcurrentHashMap<>();
  }

  private final Map<ApiResource, Tables<K>> tables = new ConcurrentHashMap<>();
  private final Map<RuleRef<K>, ResolvedRule> rules = new ConcurrentHashMap<>();
  private final Map<K, List<ResolvedRule>> byParent = new ConcurrentHashMap<>();

  /** Files the rules a parent reads by (replacing what it read by before). */
  synchronized void put(K parent, List<ResolvedRule> parentRules) {
    Objects.requireNonNull(parent, "parent");
    if (parentRules.equals(byParent.get(parent))) {
      return;
    }
    remove(parent);
    byParent.put(parent, List.copyOf(parentRules));
    for (int i = 0; i < parentRules.size(); i++) {
      ResolvedRule rule = parentRules.get(i);
      RuleRef<K> ref = new RuleRef<>(parent, i);
      rules.put(ref, rule);
      Tables<K> table = tables.computeIfAbsent(rule.resource(), r -> new Tables<>());
      if (rule.rule().selection() == RelatedRule.Selection.NAMESPACE_SELECTOR) {
        table.byNamespaceLabels.put(ref, rule);
      } else if (!rule.rule().names().isEmpty()) {
        for (String name : rule.rule().names()) {
          table.byName.computeIfAbsent(rule.scope() + "/" + name, key -> ConcurrentHashMap.newKeySet()).add(ref);
        }
      } else {
        table.byLabels.put(ref, rule.scope(), rule.rule().labels());
      }
    }
  }

  /** Forgets a parent (deleted, or no longer read by any rule). */
  synchronized void remove(K parent) {
    List<ResolvedRule> previous = byParent.remove(parent);
    if (previous == null) {
      return;
    }
    for (int i = 0; i < previous.size(); i++) {
      ResolvedRule rule = previous.get(i);
      RuleRef<K> ref = new RuleRef<>(parent, i);
      rules.remove(ref);
      Tables<K> table = tables.get(rule.resource());
      if (table == null) {
        continue;
      }
      table.byNamespaceLabels.remove(ref);
      table.byLabels.remove(ref);
      for (String name : rule.rule().names()) {
        String key = rule.scope() + "/" + name;
        Set<RuleRef<K>> refs = table.byName.get(key);
        if (refs != null) {
          refs.remove(ref);
          if (refs.isEmpty()) {
            table.byName.remove(key, refs);
          }
        }
      }
    }
  }

  /**
   * The parents whose rules select {@code object}, an object of {@code resource}, among the rules that read from
   * the informer of {@code scope} (the namespace their {@link ResolvedRule#scope()} reads, {@code ""} for every
   * namespace and for a cluster-scoped resource): the informer the object's event came from.
   */
  Set<K> parentsOf(ApiResource resource, String scope, KubeObject object,
      Function<String, Map<String, String>> namespaceLabels) {
    Tables<K> table = tables.get(resource);
    if (table == null) {
      return Set.of();
    }
    String namespace = object.namespace();
    String name = object.name();
    Set<RuleRef<K>> candidates = new HashSet<>();
    candidates.addAll(table.byName.getOrDefault(namespace + "/" + name, Set.of()));
    if (!namespace.isEmpty()) {
      candidates.addAll(table.byName.getOrDefault("/" + name, Set.of()));
    }
    candidates.addAll(table.byLabels.matching(namespace, object.labels()));
    candidates.addAll(table.byNamespaceLabels.keySet());
    Set<K> parents = new HashSet<>();
    for (RuleRef<K> ref : candidates) {
      ResolvedRule rule = rules.get(ref);
      if (rule != null && rule.scope().equals(scope) && !parents.contains(ref.parent())
          && rule.selects(object, namespaceLabels)) {
        parents.add(ref.parent());
      }
    }
    return parents;
  }

  /** The parents that read some resource by namespace labels: a namespace's labels changed. */
  Set<K> parentsSelectingNamespaces() {
    Set<K> parents = new HashSet<>();
    tables.values().forEach(table -> table.byNamespaceLabels.keySet().forEach(ref -> parents.add(ref.parent())));
    return parents;
  }

  /** How many parents are filed (for tests). */
  int size() {
    return byParent.size();
  }
}
