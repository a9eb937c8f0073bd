package dev.metareactor.engine.controller.related;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.HookSpec.HookVersion;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/** {@link RelatedRule} parsing, {@link ResolvedRule} scoping and selection, and the {@link RelatedIndex}. */
class RelatedRulesTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource NAMESPACES = new ApiResource("", "v1", "namespaces", "Namespace", false, Set.of());
  private static final Map<String, Map<String, String>> NAMESPACE_LABELS =
      Map.of("prod", Map.of("env", "prod"), "dev", Map.of("env", "dev"));

  private static RelatedRule rule(String json) {
    return RelatedRule.parse(JSON.readTree(json), 0);
  }

  private static KubeObject object(String namespace, String name, Map<String, String> labels) {
    var object = KubeJson.nodes().objectNode().put("apiVersion", "v1").put("kind", "ConfigMap");
    var metadata = object.putObject("metadata").put("name", name);
    if (namespace != null) {
      metadata.put("namespace", namespace);
    }
    if (labels != null) {
      var labelNode = metadata.putObject("labels");
      labels.forEach(labelNode::put);
    }
    return KubeObject.of(object);
  }

  private static boolean selects(ResolvedRule rule, KubeObject object) {
    return rule.selects(object, ns -> NAMESPACE_LABELS.getOrDefault(ns, Map.of()));
  }

  @Test
  void theSelectionTypeFollowsFromTheFieldsAsUpstream() {
    assertThat(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\"}").selection())
        .isEqualTo(RelatedRule.Selection.LABELS);
    assertThat(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"labelSelector\":{}}").selection())
        .isEqualTo(RelatedRule.Selection.LABELS);
    assertThat(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"labelSelector\":{},\"namespace\":\"a\"}")
        .selection()).isEqualTo(RelatedRule.Selection.NAMESPACE_AND_LABELS);
    assertThat(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"names\":[\"x\"]}").selection())
        .isEqualTo(RelatedRule.Selection.NAMESPACES_AND_NAMES);
    assertThat(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespaceSelector\":{}}").selection())
        .isEqualTo(RelatedRule.Selection.NAMESPACE_SELECTOR);
  }

  @Test
  void combinationsUpstreamRejectsAndWrongTypesAreErrorsNamingTheField() {
    assertThatThrownBy(() -> rule("{\"apiVersion\":\"v1\",\"resource\":\"x\",\"names\":[\"a\"],\"labelSelector\":{}}"))
        .isInstanceOf(HookResponseException.class).hasMessageContaining("relatedResources[0]: names cannot");
    assertThatThrownBy(() -> rule("{\"apiVersion\":\"v1\",\"resource\":\"x\",\"namespace\":\"a\","
        + "\"namespaceSelector\":{}}"))
        .hasMessageContaining("namespace cannot be combined with namespaceSelector");
    assertThatThrownBy(() -> rule("{\"resource\":\"x\"}")).hasMessageContaining("relatedResources[0].apiVersion");
    assertThatThrownBy(() -> rule("{\"apiVersion\":\"v1\",\"resource\":\"x\",\"names\":\"a\"}"))
        .hasMessageContaining("names must be a list of strings");
    assertThatThrownBy(() -> rule("{\"apiVersion\":\"v1\",\"resource\":\"x\",\"labelSelector\":{\"matchExpressions\":"
        + "[{\"key\":\"a\",\"operator\":\"Near\"}]}}")).hasMessageContaining("relatedResources[0].labelSelector");
  }

  @Test
  void aNamespacedParentWithAV1HookReadsItsOwnNamespaceAndMayNameNoOther() {
    RelatedRule labels = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\"}");
    assertThat(ResolvedRule.resolve(labels, CONFIG_MAPS, "team", HookVersion.V1).scope()).isEqualTo("team");
    RelatedRule names = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"names\":[\"x\"]}");
    assertThat(ResolvedRule.resolve(names, CONFIG_MAPS, "team", HookVersion.V1).scope()).isEqualTo("team");
    RelatedRule elsewhere = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"other\"}");
    assertThatThrownBy(() -> ResolvedRule.resolve(elsewhere, CONFIG_MAPS, "team", HookVersion.V1))
        .hasMessage("requested related object namespace other differs from parent object namespace team");
    RelatedRule labelsElsewhere = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"other\","
        + "\"labelSelector\":{}}");
    assertThatThrownBy(() -> ResolvedRule.resolve(labelsElsewhere, CONFIG_MAPS, "team", HookVersion.V1))
        .hasMessage("requested related object namespace other differs from parent object namespace team");
    RelatedRule byNamespace = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespaceSelector\":{}}");
    assertThatThrownBy(() -> ResolvedRule.resolve(byNamespace, CONFIG_MAPS, "team", HookVersion.V1))
        .hasMessage("namespaceSelector is not supported for namespaced parent in v1 hook version");
    RelatedRule anywhere = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"*\"}");
    assertThat(ResolvedRule.resolve(anywhere, CONFIG_MAPS, "team", HookVersion.V1).scope()).isEmpty();
    // Read whole, as upstream; a v1 request then shows none of them (visibleTo).
    RelatedRule clusterScoped = rule("{\"apiVersion\":\"v1\",\"resource\":\"namespaces\"}");
    assertThat(ResolvedRule.resolve(clusterScoped, NAMESPACES, "team", HookVersion.V1).scope()).isEmpty();
  }

  @Test
  void aNamespacedParentWithAV2HookReadsEveryNamespaceUnlessTheRuleNamesOne() {
    RelatedRule labels = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"labelSelector\":{}}");
    assertThat(ResolvedRule.resolve(labels, CONFIG_MAPS, "team", HookVersion.V2).scope()).isEmpty();
    RelatedRule names = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"names\":[\"x\"]}");
    assertThat(ResolvedRule.resolve(names, CONFIG_MAPS, "team", HookVersion.V2).scope()).isEmpty();
    RelatedRule elsewhere = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"other\"}");
    assertThat(ResolvedRule.resolve(elsewhere, CONFIG_MAPS, "team", HookVersion.V2).scope()).isEqualTo("other");
    RelatedRule byNamespace = rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespaceSelector\":{}}");
    assertThat(ResolvedRule.resolve(byNamespace, CONFIG_MAPS, "team", HookVersion.V2).scope()).isEmpty();
    RelatedRule clusterScoped = rule("{\"apiVersion\":\"v1\",\"resource\":\"namespaces\"}");
    assertThat(ResolvedRule.resolve(clusterScoped, NAMESPACES, "team", HookVersion.V2).scope()).isEmpty();
  }

  @Test
  void aV1RequestOfANamespacedParentShowsOnlyItsOwnNamespace() {
    assertThat(ResolvedRule.visibleTo(object("team", "a", null), "team", HookVersion.V1)).isTrue();
    assertThat(ResolvedRule.visibleTo(object("other", "a", null), "team", HookVersion.V1)).isFalse();
    assertThat(ResolvedRule.visibleTo(object(null, "team", null), "team", HookVersion.V1))
        .as("a cluster-scoped object").isFalse();
    assertThat(ResolvedRule.visibleTo(object("other", "a", null), "team", HookVersion.V2)).isTrue();
    assertThat(ResolvedRule.visibleTo(object(null, "team", null), "team", HookVersion.V2)).isTrue();
    assertThat(ResolvedRule.visibleTo(object("other", "a", null), "", HookVersion.V1))
        .as("a cluster-scoped parent").isTrue();
  }

  @Test
  void aClusterScopedParentReadsEveryNamespaceUnlessTheRuleNamesOne() {
    assertThat(ResolvedRule.resolve(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\"}"), CONFIG_MAPS, "",
        HookVersion.V1).scope()).isEmpty();
    assertThat(ResolvedRule.resolve(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"a\"}"),
        CONFIG_MAPS, "", HookVersion.V1).scope()).isEqualTo("a");
    assertThatThrownBy(() -> ResolvedRule.resolve(
        rule("{\"apiVersion\":\"v1\",\"resource\":\"namespaces\",\"namespaceSelector\":{}}"), NAMESPACES, "",
        HookVersion.V2)).hasMessageContaining("namespaceSelector needs a namespaced resource");
  }

  @Test
  void aResolvedRuleSelectsByNamespaceNamesLabelsAndNamespaceLabels() {
    ResolvedRule named = ResolvedRule.resolve(rule(
        "{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"src\",\"names\":[\"a\",\"b\"]}"),
        CONFIG_MAPS, "", HookVersion.V1);
    assertThat(selects(named, object("src", "a", null))).isTrue();
    assertThat(selects(named, object("src", "c", null))).isFalse();
    assertThat(selects(named, object("dst", "a", null))).isFalse();

    ResolvedRule labelled = ResolvedRule.resolve(rule(
        "{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"labelSelector\":{\"matchLabels\":{\"share\":\"yes\"}}}"),
        CONFIG_MAPS, "", HookVersion.V1);
    assertThat(selects(labelled, object("x", "a", Map.of("share", "yes")))).isTrue();
    assertThat(selects(labelled, object("x", "a", Map.of("share", "no")))).isFalse();

    ResolvedRule prodOnly = ResolvedRule.resolve(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\","
        + "\"namespaceSelector\":{\"matchLabels\":{\"env\":\"prod\"}}}"), CONFIG_MAPS, "team", HookVersion.V2);
    assertThat(selects(prodOnly, object("prod", "a", null))).isTrue();
    assertThat(selects(prodOnly, object("dev", "a", null))).isFalse();
  }

  @Test
  void theIndexFindsExactlyTheParentsWhoseRulesSelectAnObject() {
    RelatedIndex<ParentKey> index = new RelatedIndex<>();
    ParentKey byName = new ParentKey("team", "by-name");
    ParentKey byLabel = new ParentKey("", "by-label");
    ParentKey byNamespace = new ParentKey("team", "by-namespace");
    ParentKey anywhere = new ParentKey("team", "anywhere");
    index.put(byName, List.of(ResolvedRule.resolve(rule(
        "{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"names\":[\"settings\"]}"), CONFIG_MAPS, "team",
        HookVersion.V1)));
    index.put(byLabel, List.of(ResolvedRule.resolve(rule(
        "{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"labelSelector\":{\"matchLabels\":{\"share\":\"yes\"}}}"),
        CONFIG_MAPS, "", HookVersion.V1)));
    index.put(byNamespace, List.of(ResolvedRule.resolve(rule("{\"apiVersion\":\"v1\",\"resource\":\"configmaps\","
        + "\"namespaceSelector\":{\"matchLabels\":{\"env\":\"prod\"}}}"), CONFIG_MAPS, "team", HookVersion.V2)));
    index.put(anywhere, List.of(ResolvedRule.resolve(rule(
        "{\"apiVersion\":\"v1\",\"resource\":\"configmaps\",\"namespace\":\"*\",\"names\":[\"global\"]}"),
        CONFIG_MAPS, "team", HookVersion.V2)));
    ParentKey v2Labels = new ParentKey("team", "v2-labels");
    ParentKey v1Labels = new ParentKey("team", "v1-labels");
    String teamLabels = "{\"apiVersion\":\"v1\",\"resource\":\"configmaps\","
        + "\"labelSelector\":{\"matchLabels\":{\"team\":\"yes\"}}}";
    index.put(v2Labels, List.of(ResolvedRule.resolve(rule(teamLabels), CONFIG_MAPS, "team", HookVersion.V2)));
    index.put(v1Labels, List.of(ResolvedRule.resolve(rule(teamLabels), CONFIG_MAPS, "team", HookVersion.V1)));

    assertThat(parents(index, object("team", "settings", null))).containsExactly(byName);
    assertThat(parents(index, object("other", "settings", null))).isEmpty();
    assertThat(parents(index, object("other", "x", Map.of("share", "yes")))).containsExactly(byLabel);
    assertThat(parents(index, object("prod", "x", Map.of("share", "yes"))))
        .containsExactlyInAnyOrder(byLabel, byNamespace);
    assertThat(parents(index, object("dev", "global", null))).containsExactly(anywhere);
    assertThat(parents(index, object("dev", "x", Map.of("team", "yes")))).containsExactly(v2Labels);
    assertThat(parents(index, object("team", "x", Map.of("team", "yes")))).containsExactlyInAnyOrder(v2Labels,
        v1Labels);
    assertThat(index.parentsSelectingNamespaces()).containsExactly(byNamespace);
    // Each informer asks only the rules that read from it: an object's event comes from each informer that has it.
    KubeObject teamObject = object("team", "x", Map.of("team", "yes"));
    assertThat(fromInformer(index, "team", teamObject)).containsExactly(v1Labels);
    assertThat(fromInformer(index, "", teamObject)).containsExactly(v2Labels);

    index.remove(byLabel);
    assertThat(parents(index, object("other", "x", Map.of("share", "yes")))).isEmpty();
    index.put(byName, List.of());
    assertThat(parents(index, object("team", "settings", null))).isEmpty();
    assertThat(index.size()).isEqualTo(5);
  }

  /** The parents an event of {@code object} finds from both informers that see it: its namespace's and the whole's. */
  private static Set<ParentKey> parents(RelatedIndex<ParentKey> index, KubeObject object) {
    Set<ParentKey> parents = new java.util.HashSet<>(fromInformer(index, "", object));
    parents.addAll(fromInformer(index, object.namespace(), object));
    return parents;
  }

  private static Set<ParentKey> fromInformer(RelatedIndex<ParentKey> index, String scope, KubeObject object) {
    return index.parentsOf(CONFIG_MAPS, scope, object, ns -> NAMESPACE_LABELS.getOrDefault(ns, Map.of()));
  }
}
