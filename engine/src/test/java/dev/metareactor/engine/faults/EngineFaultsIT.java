package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faults of the engine process itself, under the {@link FaultLoad}, each followed by the same {@link Invariants}:
 * SIGKILL in the middle of a convergence wave, SIGTERM in the middle of an update wave, and a leader killed or paused
 * under leader election. The engine runs as users run it (the jar, in a process of its own). What its neighbours do
 * to it while it runs is in {@link NeighbourFaultsIT}.
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

}
