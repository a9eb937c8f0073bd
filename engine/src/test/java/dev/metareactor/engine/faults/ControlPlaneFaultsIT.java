package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.testing.k8s.ControlPlane;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faults of the control plane under the {@link FaultLoad}, each followed by the same {@link Invariants}: the API
 * server killed and started again on its port, watches that must resume from a history etcd no longer has (410
 * Gone), and etcd stopped (SIGSTOP) in the middle of an update wave. The components are restarted through
 * {@code hack/local-cluster.sh} on the control plane every integration test shares.
 *
 * <p>One load and one engine go through the three faults ({@link SharedLoadFaultSuite}).
 */
class ControlPlaneFaultsIT extends SharedLoadFaultSuite {

  private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneFaultsIT.class);
  private static final String EXPIRED = "metareactor_informer_expired_watches_total";

  /**
   * A sync that fails while the API server is down is reported as it should be: a SyncError naming the refused
   * connection to the server's address. Its Event is lost while the server is down, but one of a sync that failed
   * just before the server came back reaches it (a whole run failed so). Likewise a write while etcd is stopped: the
   * API server answers it 500 {@code etcdserver: request timed out} (or its own timeout) once etcd has not answered
   * it in time, and the SyncError says so (seen in a whole run). Those Events, and only those, are the faults'
   * doing.
   */
  @BeforeAll
  void excuseTheSyncErrorsOfTheApiServersAbsence() {
    int port = URI.create(load.client.getConfiguration().getMasterUrl()).getPort();
    invariants.excuseSyncErrorsContaining("Connection refused: /127.0.0.1:" + port);
    invariants.excuseSyncErrorsContaining(": 500 etcdserver: request timed out");
    invariants.excuseSyncErrorsContaining(": 504 Timeout: request did not complete within requested timeout");
  }

  private ControlPlane plane() {
    return load.cluster.controlPlane();
  }

  /**
   * The API server killed in the middle of an update wave and kept down for longer than the engine's
   * stale-cache limit: the engine does not exit, turns unready while its informers cannot follow the server, and
   * once the server is back its informers watch again (relisting where they must), it becomes ready, finishes the
   * wave and follows the next change.
   */
  @Test
  void theApiServerRestartedMidWaveIsFollowedAndTheEngineIsNotReadyWhileItIsDown() throws Exception {
    load.setValue("before-the-restart");
    awaitWaveUnderway("before-the-restart");
    long stopped = System.nanoTime();
    CompletableFuture<Void> restart = CompletableFuture.runAsync(() ->
        plane().restart("kube-apiserver", "--kill", "--down-for=20"));
    await().atMost(Duration.ofSeconds(18)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
        .until(() -> invariants.readyz(healthPort) == 503);
    Duration unready = Duration.ofNanos(System.nanoTime() - stopped);
    restart.get();
    Duration down = Duration.ofNanos(System.nanoTime() - stopped);
    assertThat(engine.isAlive()).as("the engine outlives the API server's absence").isTrue();

    Duration finished = awaitInvariants();
    load.setValue("after-the-restart");
    Duration followed = awaitInvariants();
    LOG.info("API server down {} ms: the engine unready after {} ms, the wave done {} ms after the server was back,"
        + " the next change {} ms", down.toMillis(), unready.toMillis(), finished.toMillis(), followed.toMillis());
    assertThat(engine.isAlive()).isTrue();
  }

  /**
   * The engine misses changes (it is stopped with SIGSTOP while every parent changes), etcd's history is compacted
   * and the API server restarted, so every watch must resume from a resourceVersion nobody has any more: the
   * informers get 410 Gone, relist, and the changes they never saw as events take effect.
   */
  @Test
  void watchesResumedFromACompactedHistoryRelistAndLoseNoChange() throws Exception {
    double expiredBefore = invariants.metric(metricsPort, EXPIRED);
    // Only this test's lines count: the engine went through the other faults too.
    int linesBefore = engine.lines().size();
    engine.pause();
    try {
      load.setValue("missed-while-compacted");
      plane().compactEtcd();
      plane().restart("kube-apiserver", "--kill");
    } finally {
      engine.resume();
    }
    Duration converged = awaitInvariants();
    double expired = invariants.metric(metricsPort, EXPIRED) - expiredBefore;
    LOG.info("{} watches expired and relisted; every change missed took effect {} ms after the engine went on",
        expired, converged.toMillis());
    assertThat(expired).as("watches that got 410 Gone (the parents', their children's at least)")
        .isGreaterThanOrEqualTo(2);
    List<String> lines = engine.lines();
    assertThat(lines.subList(linesBefore, lines.size())).as("the engine's log since the engine was stopped")
        .anySatisfy(line -> assertThat(line).contains("is gone from the server; relisting"));
  }

  /**
   * etcd stopped with SIGSTOP for 8 s in the middle of an update wave: the API server's writes (and the engine's
   * with them) wait or fail, the engine retries, and everything converges after SIGCONT with nothing lost.
   */
  @Test
  void etcdStoppedMidWaveLosesNothing() throws Exception {
    load.setValue("while-etcd-stops");
    awaitWaveUnderway("while-etcd-stops");
    plane().pause("etcd");
    try {
      Thread.sleep(8_000);
    } finally {
      plane().resume("etcd");
    }
    Duration converged = awaitInvariants();
    LOG.info("etcd stopped for 8 s mid-wave; converged {} ms after it went on", converged.toMillis());
    assertThat(engine.isAlive()).isTrue();
  }
}
