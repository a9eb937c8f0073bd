package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Faults that come from the engine's neighbours while it runs, under the {@link FaultLoad}, each followed by the same
 * {@link Invariants}: controller objects it cannot host, controllers whose selectors overlap, and another client
 * rewriting a child. One load and one engine go through the three ({@link SharedLoadFaultSuite}); each test sets
 * values of the load no other test sets, and puts what it adds beside the load in a namespace of its own.
 */
class NeighbourFaultsIT extends SharedLoadFaultSuite {

  private static final Logger LOG = LoggerFactory.getLogger(NeighbourFaultsIT.class);

  /**
   * Controller objects the CRDs' schema accepts and the engine cannot host, applied while the load runs: each gets
   * a Warning Event naming its problem, and the load's controllers keep converging (a whole update wave).
   */
  @Test
  void malformedControllerObjectsGetAWarningEachAndTheOthersKeepConverging(LocalCluster cluster) {
    ParentCrd plain = ParentCrd.named("Plain").withoutStatusSubresource().createIn(cluster);
    String hook = load.hooks.url("/sync");
    // The body of each one's spec, with its name.
    Map<String, String> malformed = Map.of(
        "no-hooks", ("parentResource: {apiVersion: %s, resource: %s}".formatted(load.parents.apiVersion(),
            load.parents.plural())),
        "bad-selector", (("parentResource: {apiVersion: %s, resource: %s, labelSelector: {matchExpressions:"
            + " [{key: a, operator: Near}]}}%nhooks: {sync: {webhook: {url: \"%s\"}}}").formatted(
                load.parents.apiVersion(), load.parents.plural(), hook)),
        "no-resource", (("parentResource: {apiVersion: nowhere.example.com/v1, resource: nothings}%n"
            + "hooks: {sync: {webhook: {url: \"%s\"}}}").formatted(hook)),
        "no-status", (("parentResource: {apiVersion: %s, resource: %s}%n"
            + "hooks: {sync: {webhook: {url: \"%s\"}}}").formatted(plain.apiVersion(), plain.plural(), hook)),
        "path-only", (("parentResource: {apiVersion: %s, resource: %s}%n"
            + "hooks: {sync: {webhook: {path: /sync}}}").formatted(load.parents.apiVersion(), load.parents.plural())),
        "negative-resync", (("parentResource: {apiVersion: %s, resource: %s}%nresyncPeriodSeconds: -1%n"
            + "hooks: {sync: {webhook: {url: \"%s\"}}}").formatted(load.parents.apiVersion(), load.parents.plural(),
                hook)));
    Map<String, String> expected = Map.of(
        "no-hooks", "spec.hooks: no hooks defined",
        "bad-selector", "spec.parentResource.labelSelector",
        "no-resource", "can't find resource nothings in apiVersion nowhere.example.com/v1",
        "no-status", "does not have subresource 'Status' enabled",
        "path-only", "must specify either a full 'url', or both 'service' and 'path'",
        "negative-resync", "spec.resyncPeriodSeconds: must be a non-negative integer");
    try {
      malformed.forEach(load::applyComposite);
      load.setValue("beside-malformed-controllers");
      Duration converged = awaitInvariants();
      LOG.info("an update wave beside {} malformed controllers converged in {} ms", malformed.size(),
          converged.toMillis());
      expected.forEach((name, problem) -> await().atMost(CONVERGE).untilAsserted(() ->
          assertThat(load.client.v1().events().inNamespace("default").list().getItems())
              .as("Warning Events about CompositeController %s-%s", load.hostedBy, name)
              .anySatisfy(event -> {
                assertThat(event.getInvolvedObject().getName()).isEqualTo(load.hostedBy + "-" + name);
                assertThat(event.getType()).isEqualTo("Warning");
                assertThat(event.getMessage()).contains(problem);
              })));
      assertThat(engine.output()).as("each named in the log").contains(load.hostedBy + "-no-hooks",
          load.hostedBy + "-no-resource");
    } finally {
      List<String> delete = new ArrayList<>(List.of("delete", "compositecontrollers", "--ignore-not-found"));
      malformed.keySet().forEach(name -> delete.add(load.hostedBy + "-" + name));
      load.cluster.kubectl(delete.toArray(String[]::new));
    }
  }

  /**
   * Another client keeps rewriting a field the hook owns on one child while an update wave runs: the engine puts it
   * back after each change, one write per change it sees (no hot loop), and the other parents converge as usual.
   */
  @Test
  void aConflictingWriterIsUndoneOncePerChangeWithoutStarvingOthers() throws Exception {
    double writesBefore = invariants.writes(metricsPort);
    int drifts = 0;
    long start = System.nanoTime();
    load.setValue("beside-a-conflicting-writer");
    while (Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(20)) < 0) {
      // A blind write (a merge patch without resourceVersion, as kubectl patch): it never conflicts, it just wins.
      load.client.configMaps().withName("load-0-0").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"data\": {\"value\": \"drift\"}}");
      drifts++;
      Thread.sleep(200);
    }
    Duration converged = awaitInvariants();
    double writes = invariants.writes(metricsPort) - writesBefore;
    // The wave: a status, a label and 3 children per parent at most; the drift: one write per change at most.
    double wave = FaultLoad.PARENTS * (FaultLoad.CHILDREN + 2);
    LOG.info("{} drifting writes in 20 s; the engine made {} writes (the wave needs about {}); converged {} ms after",
        drifts, writes, wave, converged.toMillis());
    assertThat(writes).as("the engine's writes: the wave's and at most one per drifting write").isLessThanOrEqualTo(
        wave + drifts + FaultLoad.PARENTS);
  }

  /**
   * Two CompositeControllers whose parents select the same children ({@code overlap=shared}) and whose hooks both
   * ask for one ConfigMap ({@code shared}), beside the load: each child gets exactly one controller, nothing changes
   * hands for 60 s (controller and UID sampled every 2 s), the engine writes nothing for them once converged, and
   * the parent that lost {@code shared} gets a {@code ChildConflict} Warning naming it.
   */
  @Test
  void overlappingSelectorsGiveEachChildOneControllerThatNeverChangesHands(LocalCluster cluster) throws Exception {
    ParentCrd left = ParentCrd.create(cluster, "Left");
    ParentCrd right = ParentCrd.create(cluster, "Right");
    KubernetesClient client = cluster.client();
    try (HookServer hooks = HookServer.builder().route("/left", request -> overlapping("left"))
        .route("/right", request -> overlapping("right")).start()) {
      for (ParentCrd side : List.of(left, right)) {
        String name = side.kind().toLowerCase(Locale.ROOT);
        load.applyComposite(name, """
            parentResource: {apiVersion: %s, resource: %s}
            childResources:
            - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
            hooks:
              sync: {webhook: {url: "%s"}}""".formatted(side.apiVersion(), side.plural(), hooks.url("/" + name)));
        side.in(client).resource(side.object(cluster.namespace(), name,
            Map.of("selector", Map.of("matchLabels", Map.of("overlap", "shared"))))).create();
      }
      try {
        Set<String> children = Set.of("left-0", "left-1", "right-0", "right-1", "shared");
        await().atMost(CONVERGE).until(() -> overlapOwners(client).keySet().equals(children));
        // A sync writes its parent's status after its children: converged once both statuses are there too.
        await().atMost(CONVERGE).until(() -> side(client, left, "left").equals("left")
            && side(client, right, "right").equals("right"));
        Map<String, String> first = overlapOwners(client);
        Map<String, Double> writesBefore = invariants.writesByRequest(metricsPort);
        for (int sample = 0; sample < 30; sample++) {
          Thread.sleep(2_000);
          assertThat(overlapOwners(client)).as("children of the overlapping controllers after %d s", 2 * (sample + 1))
              .isEqualTo(first);
        }
        Map<String, Double> writesAfter = invariants.writesByRequest(metricsPort);
        Map<String, Double> made = new TreeMap<>();
        writesAfter.forEach((request, count) -> {
          double more = count - writesBefore.getOrDefault(request, 0.0);
          if (more > 0) {
            made.put(request, more);
          }
        });
        String winner = first.get("shared").startsWith(uidOf(client, left, "left")) ? "left" : "right";
        String loser = winner.equals("left") ? "right" : "left";
        List<Event> conflicts = client.v1().events().list().getItems().stream()
            .filter(event -> "ChildConflict".equals(event.getReason())
                && loser.equals(event.getInvolvedObject().getName())).toList();
        LOG.info("overlapping selectors: shared went to {}; writes in 60 s: {}; {} Event(s) on {}: {}", winner,
            made, conflicts.size(), loser, conflicts.isEmpty() ? "" : conflicts.get(0).getMessage());
        assertThat(made).as("writes for 60 s after the overlapping controllers converged").isEmpty();
        assertThat(conflicts).isNotEmpty().allSatisfy(event -> assertThat(event.getMessage())
            .contains("ConfigMap " + cluster.namespace() + "/shared is controlled by"));
        assertThat(invariants.violations(metricsPort, healthPort)).isEmpty();
      } finally {
        load.cluster.kubectl("delete", "compositecontrollers", load.hostedBy + "-left", load.hostedBy + "-right",
            "--ignore-not-found");
      }
    }
  }

  /** A hook of one side: its own two children and the one both ask for, all labelled {@code overlap=shared}. */
  private static JsonNode overlapping(String side) {
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("status").put("side", side);
    ArrayNode children = answer.putArray("children");
    for (String name : List.of(side + "-0", side + "-1", "shared")) {
      ObjectNode child = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      child.putObject("metadata").put("name", name).putObject("labels").put("overlap", "shared");
      child.putObject("data").put("by", side);
    }
    return answer;
  }

  /** The ConfigMaps labelled {@code overlap=shared}: name to {@code <controller uid>/<own uid>}, one controller. */
  private static Map<String, String> overlapOwners(KubernetesClient client) {
    Map<String, String> owners = new TreeMap<>();
    for (ConfigMap child : client.configMaps().withLabel("overlap", "shared").list().getItems()) {
      List<OwnerReference> controllers = child.getMetadata().getOwnerReferences().stream()
          .filter(ref -> Boolean.TRUE.equals(ref.getController())).toList();
      assertThat(controllers).as("controllers of %s", child.getMetadata().getName()).hasSizeLessThanOrEqualTo(1);
      owners.put(child.getMetadata().getName(), (controllers.isEmpty() ? "none" : controllers.get(0).getUid()) + "/"
          + child.getMetadata().getUid());
    }
    return owners;
  }

  /** The {@code side} a parent's status names, or "" before its first status write. */
  private static String side(KubernetesClient client, ParentCrd crd, String name) {
    Object status = crd.in(client).withName(name).get().getAdditionalProperties().get("status");
    return status instanceof Map<?, ?> fields ? String.valueOf(fields.get("side")) : "";
  }

  private static String uidOf(KubernetesClient client, ParentCrd crd, String name) {
    return crd.in(client).withName(name).get().getMetadata().getUid();
  }
}
