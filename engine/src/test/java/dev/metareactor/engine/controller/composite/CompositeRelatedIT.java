package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The customize hook and related objects. The customize hook of these tests answers the parent's
 * {@code spec.related} as its {@code relatedResources}; the sync hook copies every related ConfigMap into a child
 * {@code <parent>-<name>} (with its {@code data.value}) and reports the related keys it was shown (of every type) in
 * {@code status.related}.
 */
class CompositeRelatedIT extends CompositeTestBase {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final Map<String, AtomicInteger> customizeCalls = new ConcurrentHashMap<>();
  private HookServer copier;

  @BeforeEach
  void startCopier() {
    copier = HookServer.builder()
        .route("/customize", request -> {
          JsonNode parent = request.path("parent");
          customizeCalls.computeIfAbsent(parent.path("metadata").path("name").asString(), n -> new AtomicInteger())
              .incrementAndGet();
          ObjectNode answer = NODES.objectNode();
          answer.set("relatedResources", parent.path("spec").path("related").deepCopy());
          return answer;
        })
        .route("/sync", CompositeRelatedIT::copyRelated)
        .start();
  }

  @AfterEach
  void stopCopier() {
    copier.close();
  }

  private static JsonNode copyRelated(JsonNode request) {
    JsonNode parent = request.path("parent");
    ObjectNode answer = NODES.objectNode();
    ArrayNode children = answer.putArray("children");
    List<String> keys = new ArrayList<>();
    request.path("related").properties().forEach(group -> group.getValue().propertyNames().forEach(keys::add));
    request.path("related").path("ConfigMap.v1").properties().forEach(entry -> {
      ObjectNode child = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      ObjectNode metadata = child.putObject("metadata")
          .put("name", parent.path("metadata").path("name").asString() + "-"
              + entry.getValue().path("metadata").path("name").asString());
      if (!parent.path("metadata").has("namespace")) {
        metadata.put("namespace", entry.getValue().path("metadata").path("namespace").asString());
      }
      child.putObject("data").put("value", entry.getValue().path("data").path("value").asString());
    });
    keys.sort(String::compareTo);
    ArrayNode related = answer.putObject("status").putArray("related");
    keys.forEach(related::add);
    request.path("related").propertyNames().forEach(group -> answer.withObject("status").withArray("groups")
        .add(group));
    return answer;
  }

  /** A controller copying related ConfigMaps, with the customize hook at the given version. */
  private String copyController(ParentCrd parentCrd, String customizeVersion, String syncVersion) {
    String name = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController(controllerYaml(name, parentCrd, "InPlace", copier.url("/sync"),
        "    customize:\n      version: " + customizeVersion + "\n      webhook:\n        url: "
            + copier.url("/customize") + "\n")
        .replace("    sync:\n", "    sync:\n      version: " + syncVersion + "\n"));
    return name;
  }

  private GenericKubernetesResource createRelatingParent(String name, List<Map<String, Object>> rules) {
    return createParent(name, Map.of("related", rules));
  }

  private void configMap(String namespace, String name, String value, Map<String, String> labels) {
    client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .withLabels(labels).endMetadata().addToData("value", value).build()).serverSideApply();
  }

  private String namespace(Map<String, String> labels) {
    String name = "it-rel-" + UUID.randomUUID().toString().substring(0, 8);
    cluster.deleteAfterTest(client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name)
        .withLabels(labels).endMetadata().build()).create());
    return name;
  }

  @SuppressWarnings("unchecked")
  private List<String> relatedKeys(String parent) {
    Object keys = status(parent).get("related");
    return keys instanceof List<?> list ? (List<String>) list : List.of();
  }

  @Test
  void namedRelatedObjectsAreShownAndTheirChangesResyncTheParent() {
    parents = ParentCrd.create(cluster, "Copy");
    String name = copyController(parents, "v1", "v1");
    configMap(cluster.namespace(), "source", "one", Map.of());
    createRelatingParent("copy", List.of(Map.of("apiVersion", "v1", "resource", "configmaps",
        "names", List.of("source"))));

    awaitChild("copy-source", "one");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys("copy")).containsExactly("source"));
    // No parent change: only the related object's event, routed through the index, brings the parent back.
    configMap(cluster.namespace(), "source", "two", Map.of());
    awaitChild("copy-source", "two");
    // And the engine's ring of recent syncs says so: the update of the related object, and the child it rewrote.
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(keptSyncs(name, "copy")).anySatisfy(sync -> {
      assertThat(sync.path("causes").toString()).contains("\"cause\":\"related\"", "\"kind\":\"ConfigMap\"",
          "\"name\":\"source\"", "\"change\":\"updated\"");
      assertThat(sync.path("writes").findValuesAsString("name")).contains("copy-source");
    }));
    assertThat(customizeCalls.get("copy")).as("one customize call per parent generation").hasValue(1);

    // A new generation asks the customize hook again; an empty answer still shows an entry for... nothing.
    patchParent("copy", Map.of("spec", Map.of("related", List.of())));
    awaitGone("copy-source");
    assertThat(customizeCalls.get("copy")).hasValue(2);
  }

  @Test
  void aClusterScopedParentReadsLabelledObjectsInEveryNamespaceKeyedByNamespaceAndName() {
    parents = ParentCrd.named("Gather").clusterScoped().createIn(cluster);
    copyController(parents, "v1", "v1");
    readsLabelledObjectsOfEveryNamespace("gather-" + UUID.randomUUID().toString().substring(0, 6));
  }

  @Test
  void aV2LabelSelectorOfANamespacedParentReadsEveryNamespace() {
    parents = ParentCrd.create(cluster, "Reach");
    copyController(parents, "v2", "v2");
    readsLabelledObjectsOfEveryNamespace("reach");
  }

  /**
   * A parent whose rule is a label selector alone sees the matching objects of two namespaces, keyed
   * {@code namespace/name}; one created in a third namespace re-syncs it by its own event (nothing about the parent
   * changes), routed through the index.
   */
  private void readsLabelledObjectsOfEveryNamespace(String parent) {
    String a = namespace(Map.of());
    String b = namespace(Map.of());
    configMap(a, "from-a", "a", Map.of("share", "yes"));
    configMap(b, "from-b", "b", Map.of("share", "yes"));
    configMap(b, "private", "no", Map.of("share", "no"));
    cluster.deleteAfterTest(createRelatingParent(parent, List.of(Map.of("apiVersion", "v1", "resource", "configmaps",
        "labelSelector", Map.of("matchLabels", Map.of("share", "yes"))))));

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys(parent))
        .containsExactlyInAnyOrder(a + "/from-a", b + "/from-b"));
    String c = namespace(Map.of());
    configMap(c, "from-c", "c", Map.of("share", "yes"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys(parent))
        .containsExactlyInAnyOrder(a + "/from-a", b + "/from-b", c + "/from-c"));
    String childNamespace = parents.namespaced() ? cluster.namespace() : c;
    await().atMost(TIMEOUT).until(() -> client.configMaps().inNamespace(childNamespace).withName(parent + "-from-c")
        .get() != null);
  }

  @Test
  void aV1LabelSelectorOfANamespacedParentReadsOnlyItsOwnNamespace() {
    parents = ParentCrd.create(cluster, "Stay");
    copyController(parents, "v1", "v1");
    String elsewhere = namespace(Map.of());
    configMap(elsewhere, "from-elsewhere", "no", Map.of("share", "yes"));
    configMap(cluster.namespace(), "at-home", "home", Map.of("share", "yes"));
    createRelatingParent("stay", List.of(Map.of("apiVersion", "v1", "resource", "configmaps",
        "labelSelector", Map.of("matchLabels", Map.of("share", "yes")))));

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys("stay")).containsExactly("at-home"));
    awaitChild("stay-at-home", "home");
  }

  /**
   * A namespaced parent whose {@code v1} customize hook asks for Secrets: the engine caches and watches its own
   * namespace's Secrets alone (the informer's meters name the namespace it watches), and a Secret of another
   * namespace that the rule's selector would match is never shown to the hook.
   */
  @Test
  void aNamespacedParentsRelatedSecretsAreWatchedInItsNamespaceAlone() {
    parents = ParentCrd.create(cluster, "Vault");
    copyController(parents, "v1", "v1");
    String elsewhere = namespace(Map.of());
    secret(elsewhere, "foreign", Map.of("share", "yes"));
    secret(cluster.namespace(), "own", Map.of("share", "yes"));
    createRelatingParent("vault", List.of(Map.of("apiVersion", "v1", "resource", "secrets",
        "labelSelector", Map.of("matchLabels", Map.of("share", "yes")))));

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys("vault")).containsExactly("own"));
    List<String> secretInformers = engine.get(true, "/metrics").body().lines()
        .filter(line -> line.startsWith("metareactor_informer_objects{") && line.contains("resource=\"secrets/v1\""))
        .toList();
    assertThat(secretInformers).as("the Secrets' informers").hasSize(1)
        .allSatisfy(line -> assertThat(line).contains("namespace=\"" + cluster.namespace() + "\"")
            .endsWith(" 1.0"));
    // A later change of the foreign Secret is not seen either: the parent still shows its own alone.
    secret(cluster.namespace(), "own-too", Map.of("share", "yes"));
    secret(elsewhere, "foreign-too", Map.of("share", "yes"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys("vault"))
        .containsExactly("own", "own-too"));
  }

  private void secret(String namespace, String name, Map<String, String> labels) {
    client.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata().withName(name)
        .withLabels(labels).endMetadata().addToStringData("token", "s3cr3t").build()).serverSideApply();
  }

  @Test
  void aV2NamespaceSelectorFollowsNamespaceLabels() {
    parents = ParentCrd.create(cluster, "Team");
    copyController(parents, "v2", "v2");
    String joined = namespace(Map.of("team", "blue"));
    String other = namespace(Map.of("team", "red"));
    configMap(joined, "blue-settings", "blue", Map.of());
    configMap(other, "red-settings", "red", Map.of());
    createRelatingParent("team", List.of(Map.of("apiVersion", "v1", "resource", "configmaps",
        "namespaceSelector", Map.of("matchLabels", Map.of("team", "blue")))));

    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys("team"))
        .containsExactly(joined + "/blue-settings"));
    // Only the namespace's labels change: its event re-syncs the parents that select namespaces.
    client.namespaces().withName(other).edit(ns -> new NamespaceBuilder(ns).editMetadata()
        .addToLabels("team", "blue").endMetadata().build());
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(relatedKeys("team"))
        .containsExactlyInAnyOrder(joined + "/blue-settings", other + "/red-settings"));
    awaitChild("team-red-settings", "red");
  }

  @Test
  void aCustomizeAnswerThatCannotBeUsedIsASyncErrorAndEveryRuleGetsAnEntry() {
    parents = ParentCrd.create(cluster, "Wrong");
    copyController(parents, "v1", "v1");
    createRelatingParent("elsewhere", List.of(Map.of("apiVersion", "v1", "resource", "configmaps",
        "namespace", "kube-system", "names", List.of("x"))));
    createRelatingParent("unserved", List.of(Map.of("apiVersion", "nope.example.com/v1", "resource", "gadgets")));
    createRelatingParent("empty", List.of(Map.of("apiVersion", "v1", "resource", "secrets", "names",
        List.of("none"))));

    await().atMost(TIMEOUT).until(() -> hasSyncError("elsewhere",
        "requested related object namespace kube-system differs from parent object namespace"));
    await().atMost(TIMEOUT).until(() -> hasSyncError("unserved",
        "gadgets in nope.example.com/v1 is not served by the API server"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("empty").get("groups"))
        .as("an entry for the rule's type even when nothing matches").isEqualTo(List.of("Secret.v1")));
  }
}
