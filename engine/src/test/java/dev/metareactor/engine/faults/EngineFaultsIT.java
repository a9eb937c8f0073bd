package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
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
 * Faults of the engine process itself, under the {@link FaultLoad}, each followed by the same {@link Invariants}:
 * SIGKILL in the middle of a convergence wave, SIGTERM in the middle of an update wave, leader election, a
 * conflicting writer, and bad controller configurations arriving while it runs (malformed objects, overlapping
 * selectors). The engine runs as users run it (the jar, in a process of its own).
 */
class EngineFaultsIT extends FaultSuite {

  private static final Logger LOG = LoggerFactory.getLogger(EngineFaultsIT.class);

  @Test
  void sigkillInTheMiddleOfAConvergenceWaveLosesAndDuplicatesNothing() {
    load.createControllers();
    load.createObjects("one");
    Map<String, String> atKill;
    try (EngineProcess first = engine("first")) {
      int total = FaultLoad.PARENTS * FaultLoad.CHILDREN;
      await().atMost(CONVERGE).pollInterval(Duration.ofMillis(100))
          .until(() -> invariants.childUids().size() >= total / 3);
      first.close(); // SIGKILL: children half created, statuses half written
      atKill = invariants.childUids();
      LOG.info("killed with {} of {} children created", atKill.size(), total);
      assertThat(atKill.size()).as("children when killed").isLessThan(total);
    }
    try (EngineProcess second = engine("second")) {
      Duration converged = awaitInvariants();
      LOG.info("re-converged {} ms after the new engine started", converged.toMillis());
      Map<String, String> after = invariants.childUids();
      atKill.forEach((name, uid) -> assertThat(after.get(name)).as("child %s, created before the kill", name)
          .isEqualTo(uid));
      assertThat(second.output()).doesNotContain("\"level\":\"error\"");
    }
  }

  @Test
  void sigtermUnderLoadDrainsExitsZeroAndTheNextEngineHasNothingToRedo() throws Exception {
    load.createControllers();
    load.createObjects("one");
    try (EngineProcess first = engine("first")) {
      awaitInvariants();
      load.setValue("two");
      awaitWaveUnderway("two");
      long stop = System.nanoTime();
      first.terminate();
      Integer exit = first.awaitExit(SHUTDOWN_TIMEOUT.toSeconds() + 20);
      LOG.info("SIGTERM in an update wave: exit {} after {} ms", exit,
          Duration.ofNanos(System.nanoTime() - stop).toMillis());
      assertThat(exit).as("exit code after SIGTERM; log:%n%s", first.output()).isZero();
    }
    try (EngineProcess second = engine("second")) {
      Duration converged = awaitInvariants();
      LOG.info("the update wave finished {} ms after the new engine started", converged.toMillis());
      second.terminate();
      assertThat(second.awaitExit(SHUTDOWN_TIMEOUT.toSeconds() + 20)).isZero();
    }
    int callsBefore = load.totalSyncCalls();
    try (EngineProcess third = engine("third")) {
      awaitInvariants();
      // Every parent synced again by the new engine, and not one write for any of them.
      await().atMost(CONVERGE).until(() -> load.totalSyncCalls() >= callsBefore + FaultLoad.PARENTS);
      await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> true);
      assertThat(invariants.writesByRequest(metricsPort)).as("writes by an engine started on a converged cluster")
          .isEmpty();
    }
  }

  /**
   * Controller objects the CRDs' schema accepts and the engine cannot host, applied while the load runs: each gets
   * a Warning Event naming its problem, and the load's controllers keep converging (a whole update wave).
   */
  @Test
  void malformedControllerObjectsGetAWarningEachAndTheOthersKeepConverging() {
    load.createControllers();
    load.createObjects("one");
    ParentCrd plain = ParentCrd.named("Plain").withoutStatusSubresource().createIn(load.cluster);
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
    try (EngineProcess engine = engine("engine")) {
      awaitInvariants();
      malformed.forEach(load::applyComposite);
      load.setValue("two");
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
      load.cluster.kubectl("delete", "compositecontrollers", "-l", "metareactor.dev/hosted-by=" + load.hostedBy,
          "--ignore-not-found");
    }
  }

  /**
   * Two engines with {@code --leader-election} under load: only the lease holder writes (the standby's write
   * counter stays at zero), and when the leader is killed in the middle of an update wave the standby takes the
   * lease within its duration and finishes the wave.
   */
  @Test
  void theStandbyTakesOverFromAKilledLeaderWithinTheLeaseAndNeverWritesBefore() throws Exception {
    load.createControllers();
    load.createObjects("one");
    String[] election = {"--leader-election", "--leader-election-namespace=" + load.cluster.namespace(),
        "--leader-election-id=" + load.hostedBy};
    try (EngineProcess a = engine("a", election)) {
      int aMetrics = metricsPort;
      int aHealth = healthPort;
      await().atMost(CONVERGE).until(() -> a.output().contains("Successfully acquired lease"));
      try (EngineProcess b = engine("b", election)) {
        int bMetrics = metricsPort;
        int bHealth = healthPort;
        // The standby is up (it serves its metrics) before the wave starts.
        await().atMost(CONVERGE).ignoreExceptions().until(() -> invariants.writes(bMetrics) >= 0);
        metricsPort = aMetrics;
        healthPort = aHealth;
        awaitInvariants();
        load.setValue("two");
        awaitWaveUnderway("two");
        assertThat(invariants.writes(bMetrics)).as("writes by the standby while the other holds the lease").isZero();
        assertThat(b.output()).doesNotContain("Successfully acquired lease");

        long killed = System.nanoTime();
        a.close(); // SIGKILL: the lease is not released, it must expire
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> b.output().contains("Successfully acquired lease"));
        Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
        metricsPort = bMetrics;
        healthPort = bHealth;
        Duration finished = awaitInvariants();
        LOG.info("the standby took the lease {} ms after the leader was killed and finished the wave {} ms later",
            takeover.toMillis(), finished.toMillis());
      }
    }
  }

  /**
   * The leader stopped (SIGSTOP) for longer than its lease while the standby takes the lease over, then let go on
   * (SIGCONT) after every parent has changed, with the new leader stopped in turn: the old leader must see that its
   * lease is gone before it syncs anything. With the new leader stopped, nothing else could call a hook or write,
   * so the proof is that no hook was called and no object of the load changed while the old leader ran again; it
   * then ends (exit 1, as a lost lease ends it), and the new leader, let go on, converges the change.
   */
  @Test
  void aLeaderPausedPastItsLeaseSyncsNothingWhenItGoesOnAndEnds() throws Exception {
    load.createControllers();
    load.createObjects("one");
    String[] election = {"--leader-election", "--leader-election-namespace=" + load.cluster.namespace(),
        "--leader-election-id=" + load.hostedBy};
    try (EngineProcess a = engine("a", election)) {
      await().atMost(CONVERGE).until(() -> a.output().contains("Successfully acquired lease"));
      awaitInvariants();
      try (EngineProcess b = engine("b", election)) {
        int bMetrics = metricsPort;
        await().atMost(CONVERGE).ignoreExceptions().until(() -> invariants.writes(bMetrics) >= 0);
        a.pause();
        long paused = System.nanoTime();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
            .until(() -> b.output().contains("Successfully acquired lease"));
        Duration takeover = Duration.ofNanos(System.nanoTime() - paused);
        awaitInvariants();

        b.pause();
        int calls;
        Map<String, String> before;
        Duration ended;
        try {
          load.setValue("two");
          before = invariants.versions();
          calls = load.hookCalls.get();
          long resumed = System.nanoTime();
          a.resume();
          Integer exit = a.awaitExit(SHUTDOWN_TIMEOUT.toSeconds() + 30);
          ended = Duration.ofNanos(System.nanoTime() - resumed);
          assertThat(exit).as("exit code of the old leader after it went on; log:%n%s", a.output()).isEqualTo(1);
          assertThat(load.hookCalls.get() - calls).as("hook calls while only the old leader ran").isZero();
          assertThat(invariants.versions()).as("the load's objects while only the old leader ran").isEqualTo(before);
        } finally {
          b.resume();
        }
        Duration converged = awaitInvariants();
        LOG.info("the leader paused: the standby took the lease {} ms later; the old leader went on, synced nothing "
            + "and ended {} ms after SIGCONT; the new leader converged the change {} ms after it went on",
            takeover.toMillis(), ended.toMillis(), converged.toMillis());
        assertThat(a.output()).contains("Failed to renew lease");
      }
    }
  }

  /**
   * Another client keeps rewriting a field the hook owns on one child while an update wave runs: the engine puts it
   * back after each change, one write per change it sees (no hot loop), and the other parents converge as usual.
   */
  @Test
  void aConflictingWriterIsUndoneOncePerChangeWithoutStarvingOthers() throws Exception {
    try (EngineProcess engine = convergedEngine("engine")) {
      double writesBefore = invariants.writes(metricsPort);
      int drifts = 0;
      long start = System.nanoTime();
      load.setValue("two");
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
  }

  /**
   * Two CompositeControllers whose parents select the same children ({@code overlap=shared}) and whose hooks both
   * ask for one ConfigMap ({@code shared}), beside the load: each child gets exactly one controller, nothing changes
   * hands for 60 s (controller and UID sampled every 2 s), the engine writes nothing for them once converged, and
   * the parent that lost {@code shared} gets a {@code ChildConflict} Warning naming it.
   */
  @Test
  void overlappingSelectorsGiveEachChildOneControllerThatNeverChangesHands() throws Exception {
    ParentCrd left = ParentCrd.create(load.cluster, "Left");
    ParentCrd right = ParentCrd.create(load.cluster, "Right");
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
        side.in(load.client).resource(side.object(load.cluster.namespace(), name,
            Map.of("selector", Map.of("matchLabels", Map.of("overlap", "shared"))))).create();
      }
      try (EngineProcess engine = convergedEngine("engine")) {
        Set<String> children = Set.of("left-0", "left-1", "right-0", "right-1", "shared");
        await().atMost(CONVERGE).until(() -> overlapOwners().keySet().equals(children));
        Map<String, String> first = overlapOwners();
        double writesBefore = invariants.writes(metricsPort);
        for (int sample = 0; sample < 30; sample++) {
          Thread.sleep(2_000);
          assertThat(overlapOwners()).as("children of the overlapping controllers after %d s", 2 * (sample + 1))
              .isEqualTo(first);
        }
        double writes = invariants.writes(metricsPort) - writesBefore;
        String winner = first.get("shared").startsWith(uidOf(left, "left")) ? "left" : "right";
        String loser = winner.equals("left") ? "right" : "left";
        List<Event> conflicts = load.client.v1().events().list().getItems().stream()
            .filter(event -> "ChildConflict".equals(event.getReason())
                && loser.equals(event.getInvolvedObject().getName())).toList();
        LOG.info("overlapping selectors: shared went to {}; {} writes in 60 s; {} Event(s) on {}: {}", winner,
            writes, conflicts.size(), loser, conflicts.isEmpty() ? "" : conflicts.get(0).getMessage());
        assertThat(writes).as("writes for 60 s after the overlapping controllers converged").isZero();
        assertThat(conflicts).isNotEmpty().allSatisfy(event -> assertThat(event.getMessage())
            .contains("ConfigMap " + load.cluster.namespace() + "/shared is controlled by"));
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
  private Map<String, String> overlapOwners() {
    Map<String, String> owners = new TreeMap<>();
    for (ConfigMap child : load.client.configMaps().withLabel("overlap", "shared").list().getItems()) {
      List<OwnerReference> controllers = child.getMetadata().getOwnerReferences().stream()
          .filter(ref -> Boolean.TRUE.equals(ref.getController())).toList();
      assertThat(controllers).as("controllers of %s", child.getMetadata().getName()).hasSizeLessThanOrEqualTo(1);
      owners.put(child.getMetadata().getName(), (controllers.isEmpty() ? "none" : controllers.get(0).getUid()) + "/"
          + child.getMetadata().getUid());
    }
    return owners;
  }

  private String uidOf(ParentCrd crd, String name) {
    return crd.in(load.client).withName(name).get().getMetadata().getUid();
  }
}
