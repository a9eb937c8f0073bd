package dev.metareactor.engine.controller.related;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.HookSpec.HookVersion;
import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Which informers a customize hook's answers start: only those of what the answers can name. A namespaced parent's
 * rules read its own namespace (a {@code v1} hook) and hold that namespace's informer alone; an informer of every
 * namespace only for a rule that reads every namespace; each given back when no parent reads from it any more.
 */
class RelatedObjectsTest {

  private static final ApiResource SECRETS = new ApiResource("", "v1", "secrets", "Secret", true, Set.of());
  private static final ApiResource NAMESPACES =
      new ApiResource("", "v1", "namespaces", "Namespace", false, Set.of());
  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of());
  private static final ApiResource CLUSTER_THINGS =
      new ApiResource("test.metareactor.dev", "v1", "clusterthings", "ClusterThing", false, Set.of());
  private static final String EVERY_SECRET = "{\"relatedResources\":[{\"apiVersion\":\"v1\",\"resource\":\"secrets\","
      + "\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}}}]}";

  private final FakeInformers informers = new FakeInformers();
  private final RecordingApi api = new RecordingApi();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final ControllerContext context = new ControllerContext(EngineCommand.parse(),
      new FixedDiscovery(SECRETS, NAMESPACES, THINGS, CLUSTER_THINGS), informers, api,
      new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"), hooks,
      new SimpleMeterRegistry(), Scheduling.production());
  /** What the related objects enqueued, each key with its cause. */
  private final List<String> enqueued = new CopyOnWriteArrayList<>();
  /** What the customize hook answers now. */
  private final AtomicReference<String> answer = new AtomicReference<>(EVERY_SECRET);

  @AfterEach
  void close() {
    hooks.close();
  }

  private RelatedObjects<ParentKey> related(HookVersion version) {
    ObjectNode controller = KubeJson.nodes().objectNode().put("kind", "CompositeController");
    return new RelatedObjects<>("CompositeController", "c", controller,
        (request, root) -> Mono.just(KubeJson.mapper().readTree(answer.get())),
        Optional.of(new HookSpec(version, KubeJson.nodes().objectNode())), context,
        (key, trigger) -> enqueued.add(key + " because " + trigger));
  }

  private static KubeObject object(String apiVersion, String kind, String namespace, String name,
      Map<String, String> labels) {
    ObjectNode object = KubeJson.nodes().objectNode().put("apiVersion", apiVersion).put("kind", kind);
    ObjectNode metadata = object.putObject("metadata").put("name", name).put("uid", namespace + "-" + name)
        .put("generation", 1);
    if (!namespace.isEmpty()) {
      metadata.put("namespace", namespace);
    }
    labels.forEach(metadata.putObject("labels")::put);
    return KubeObject.of(object);
  }

  private static KubeObject parent(String namespace, String name) {
    return object("test.metareactor.dev/v1", "Thing", namespace, name, Map.of());
  }

  private JsonNode relatedOf(RelatedObjects<ParentKey> related, KubeObject parent, ApiResource resource,
      HookVersion version) {
    return related.of(new ParentKey(parent.namespace(), parent.name()), parent, parent.toTree(), resource, version)
        .block(Duration.ofSeconds(5));
  }

  /** A Secret {@code token} labelled {@code app=x} in namespace {@code team} and one in {@code other}. */
  private void secretsInTeamAndOther() {
    informers.of(SECRETS).put(object("v1", "Secret", "team", "token", Map.of("app", "x")))
        .put(object("v1", "Secret", "other", "token", Map.of("app", "x")));
  }

  @Test
  void aNamespacedParentsV1RulesWatchItsNamespaceAloneAndAnotherNamespacesSecretIsNeverShown() {
    secretsInTeamAndOther();
    try (RelatedObjects<ParentKey> related = related(HookVersion.V1)) {
      JsonNode shown = relatedOf(related, parent("team", "p"), THINGS, HookVersion.V1);

      assertThat(shown.path("Secret.v1").propertyNames()).containsExactly("token");
      assertThat(shown.path("Secret.v1").path("token").path("metadata").path("namespace").asString())
          .isEqualTo("team");
      assertThat(informers.held()).as("only the parent's namespace is watched").containsOnlyKeys("secrets/v1 in team");
    }
    assertThat(informers.held()).isEmpty();
  }

  @Test
  void aV2RuleReadingEveryNamespaceWatchesTheWholeResourceAndOneNamingANamespaceThatNamespace() {
    secretsInTeamAndOther();
    try (RelatedObjects<ParentKey> related = related(HookVersion.V2)) {
      JsonNode shown = relatedOf(related, parent("team", "p"), THINGS, HookVersion.V2);
      assertThat(shown.path("Secret.v1").propertyNames()).containsExactlyInAnyOrder("team/token", "other/token");
      assertThat(informers.held()).as("a rule that reads every namespace").containsOnlyKeys("secrets/v1");

      // A new generation names one other namespace: only that one is watched now.
      answer.set("{\"relatedResources\":[{\"apiVersion\":\"v1\",\"resource\":\"secrets\",\"namespace\":\"other\","
          + "\"names\":[\"token\"]}]}");
      KubeObject next = parent("team", "p");
      ObjectNode json = next.toTree();
      ((ObjectNode) json.get("metadata")).put("generation", 2);
      KubeObject second = KubeObject.of(json);
      shown = relatedOf(related, second, THINGS, HookVersion.V2);
      assertThat(shown.path("Secret.v1").propertyNames()).containsExactly("other/token");
      assertThat(informers.held()).containsOnlyKeys("secrets/v1 in other");
    }
  }

  @Test
  void parentsOfOneNamespaceShareItsInformerAndItIsGivenBackWithTheLastOfThem() {
    try (RelatedObjects<ParentKey> related = related(HookVersion.V1)) {
      relatedOf(related, parent("team", "a"), THINGS, HookVersion.V1);
      relatedOf(related, parent("team", "b"), THINGS, HookVersion.V1);
      relatedOf(related, parent("ops", "c"), THINGS, HookVersion.V1);
      assertThat(informers.held()).isEqualTo(Map.of("secrets/v1 in team", 1, "secrets/v1 in ops", 1));

      related.forget(new ParentKey("team", "a"));
      assertThat(informers.held()).containsOnlyKeys("secrets/v1 in team", "secrets/v1 in ops");
      related.forget(new ParentKey("team", "b"));
      assertThat(informers.held()).containsOnlyKeys("secrets/v1 in ops");
    }
  }

  @Test
  void aClusterScopedParentsRuleReadsEveryNamespace() {
    informers.of(SECRETS).put(object("v1", "Secret", "team", "token", Map.of("app", "x")));
    try (RelatedObjects<ParentKey> related = related(HookVersion.V1)) {
      KubeObject parent = object("test.metareactor.dev/v1", "ClusterThing", "", "global", Map.of());
      JsonNode shown = relatedOf(related, parent, CLUSTER_THINGS, HookVersion.V1);
      assertThat(shown.path("Secret.v1").propertyNames()).containsExactly("team/token");
      assertThat(informers.held()).containsOnlyKeys("secrets/v1");
    }
  }

  @Test
  void aChangeOfARelatedObjectEnqueuesTheParentsThatReadItNamingIt() {
    secretsInTeamAndOther();
    try (RelatedObjects<ParentKey> related = related(HookVersion.V1)) {
      relatedOf(related, parent("team", "p"), THINGS, HookVersion.V1);
      enqueued.clear(); // the Secrets the new informer showed at once
      KubeObject token = informers.of(SECRETS).get("team", "token").orElseThrow();
      ObjectNode json = token.toTree();
      ((ObjectNode) json.get("metadata")).put("resourceVersion", "2");
      informers.of(SECRETS).deliver(new ObjectEvent(ObjectEvent.Type.UPDATED, token, KubeObject.of(json)));

      // Once for its new state and once for its previous one (the queue coalesces them).
      assertThat(enqueued).containsOnly("team/p because related object changed: Secret team/token (updated)");
    }
  }
}
