package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Shadow hooks on the real control plane ({@code metareactor.dev/shadow-sync-url}): a shadow that answers as the real
 * hook does is counted {@code same} and reported nowhere; one that answers otherwise is counted {@code differs} and
 * reported once as a {@code ShadowDiffers} Event naming the first differing field, while only the real answer is
 * written; a shadow that hangs or fails never holds up or fails the real syncs.
 */
@LocalKubernetes
class ShadowHooksIT {

  private final String run = UUID.randomUUID().toString().substring(0, 6);
  private LocalCluster cluster;
  private KubernetesClient client;
  private EngineUnderTest engine;
  private HookServer hooks;
  private ParentCrd sites;
  private final CountDownLatch released = new CountDownLatch(1);
  private final AtomicInteger hanging = new AtomicInteger();

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    sites = ParentCrd.create(cluster, "Site");
    hooks = HookServer.builder()
        .route("/sync", request -> answer(request, "real"))
        .route("/shadow-same", request -> answer(request, "real"))
        .route("/shadow-differs", request -> answer(request, "shadow"))
        .routeAsync("/shadow-hangs", request -> {
          hanging.incrementAndGet();
          return Mono.fromCallable(() -> released.await(2, TimeUnit.MINUTES))
              .subscribeOn(Schedulers.boundedElastic())
              .map(ignored -> answer(request, "real"));
        })
        .route("/shadow-fails", request -> {
          throw new IllegalStateException("this shadow is broken");
        })
        .start();
    engine = EngineUnderTest.start(cluster);
  }

  @AfterEach
  void stop() {
    released.countDown();
    engine.close();
    hooks.close();
  }

  /** A ConfigMap {@code <parent>-child} whose data says who answered, and a status. */
  private static JsonNode answer(JsonNode request, String who) {
    String parent = request.path("parent").path("metadata").path("name").asString();
    ObjectNode answer = KubeJson.nodes().objectNode();
    ObjectNode child = answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
    child.putObject("metadata").put("name", parent + "-child");
    child.putObject("data").put("value", who);
    answer.putObject("status").put("children", 1);
    return answer;
  }

  @Test
  void aShadowThatAgreesIsCountedSameAndOneThatDiffersIsReportedOnceWhileOnlyTheRealAnswerIsWritten() {
    String controller = controller("/shadow-same");
    createSite("agreeing");

    await().atMost(EngineUnderTest.TIMEOUT).until(() -> engine.shadowSyncs(controller, "same") >= 1);
    assertThat(value("agreeing-child")).isEqualTo("real");
    assertThat(engine.eventsAbout(cluster.namespace(), "agreeing")).noneMatch(event ->
        Shadow.DIFFERS.equals(event.getReason()));

    annotate(controller, "/shadow-differs");
    // A resync: each sync compares again; the Event is once per parent and generation.
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> engine.shadowSyncs(controller, "differs") >= 3);
    List<String> reported = engine.eventsAbout(cluster.namespace(), "agreeing").stream()
        .filter(event -> Shadow.DIFFERS.equals(event.getReason()))
        .map(event -> event.getMessage() + " (count " + event.getCount() + ")").toList();
    assertThat(reported).singleElement().asString()
        .contains("v1 ConfigMap " + cluster.namespace() + "/agreeing-child .data.value: \"real\" (real) vs"
            + " \"shadow\" (shadow)")
        .endsWith("(count 1)");
    assertThat(value("agreeing-child")).as("only the real answer is written").isEqualTo("real");
  }

  @Test
  void aShadowThatHangsOrFailsNeverHoldsUpTheRealSyncs() {
    String controller = controller("/shadow-hangs");
    createSite("first");
    createSite("second");

    // Both parents converge while the shadow has not answered a single call.
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> "real".equals(value("first-child"))
        && "real".equals(value("second-child")) && hanging.get() >= 1);
    assertThat(engine.shadowSyncs(controller, "same") + engine.shadowSyncs(controller, "differs")).isZero();
    released.countDown();
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> engine.shadowSyncs(controller, "same") >= 1);

    annotate(controller, "/shadow-fails");
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> engine.shadowSyncs(controller, "error") >= 2);
    sites.in(client).withName("first").patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\": {\"note\": \"edited\"}}");
    await().atMost(EngineUnderTest.TIMEOUT).until(() -> observedGeneration("first") == 2);
    assertThat(engine.eventsAbout(cluster.namespace(), "first")).noneMatch(event ->
        "SyncError".equals(event.getReason()));
  }

  private String controller(String shadow) {
    String name = "shadow-" + run;
    engine.createController("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %s
          annotations: {metareactor.dev/shadow-sync-url: "%s"}
        spec:
          generateSelector: true
          resyncPeriodSeconds: 1
          parentResource: {apiVersion: %s, resource: %s}
          childResources:
          - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
          hooks:
            sync: {webhook: {url: "%s"}}
        """.formatted(name, hooks.url(shadow), sites.apiVersion(), sites.plural(), hooks.url("/sync")));
    return name;
  }

  /** Points the controller's shadow elsewhere: the engine restarts the controller with it. */
  private void annotate(String controller, String shadow) {
    client.genericKubernetesResources(EngineUnderTest.COMPOSITE_CONTROLLERS).withName(controller)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\": {\"annotations\": {"
            + "\"metareactor.dev/shadow-sync-url\": \"" + hooks.url(shadow) + "\"}}}");
  }

  private void createSite(String name) {
    sites.in(client).resource(sites.object(cluster.namespace(), name, Map.of("note", "first"))).create();
  }

  private String value(String configMap) {
    ConfigMap found = client.configMaps().withName(configMap).get();
    return found == null || found.getData() == null ? null : found.getData().get("value");
  }

  private long observedGeneration(String name) {
    GenericKubernetesResource site = sites.in(client).withName(name).get();
    Object status = site.getAdditionalProperties().get("status");
    return status instanceof Map<?, ?> map && map.get("observedGeneration") instanceof Number number
        ? number.longValue() : 0;
  }
}
