package dev.metareactor.engine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * {@code --leader-election} with the jar as users run it, two replicas against the real API server: the log lines
 * Metacontroller v4.17.2 prints (and scripts grep for), a graceful stop that releases the lease without an error,
 * and a lease really lost, which is an error and exit code 1.
 */
@LocalKubernetes
class LeaderElectionIT {

  private static final Duration START = Duration.ofSeconds(90);

  private static EngineProcess replica(LocalCluster cluster, Path dir, String name, String leaseId) {
    return EngineProcess.start(dir.resolve(name + ".log"), "--kubeconfig=" + cluster.kubeconfig(),
        "--metrics-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0",
        "--target-label-selector=metareactor.dev/hosted-by=nothing", "--leader-election",
        "--leader-election-namespace=" + cluster.namespace(), "--leader-election-id=" + leaseId);
  }

  /** Metacontroller's line for {@code message} about the lease, as zap writes it; only the time may differ. */
  private static Pattern upstreamLine(String level, String message, String lock) {
    return Pattern.compile(Pattern.quote("{\"level\":\"" + level + "\",\"ts\":\"")
        + "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(Z|[+-]\\d\\d:\\d\\d)"
        + Pattern.quote("\",\"msg\":\"" + message + "\",\"lock\":\"" + lock + "\"}"));
  }

  private static boolean printed(EngineProcess engine, Pattern line) {
    return engine.lines().stream().anyMatch(l -> line.matcher(l).matches());
  }

  /** Installs what the engine needs to start; a lease name of the test's own. */
  private static String leaseId(LocalCluster cluster) {
    EngineUnderTest.installCrds(cluster);
    return "le-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static Lease lease(LocalCluster cluster, String id) {
    return cluster.client().leases().inNamespace(cluster.namespace()).withName(id).get();
  }

  @Test
  void aGracefulStopReleasesTheLeaseWithoutAnErrorAndTheStandbyTakesIt(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    String id = leaseId(cluster);
    String lock = cluster.namespace() + "/" + id;
    try (EngineProcess first = replica(cluster, dir, "first", id);
        EngineProcess second = replica(cluster, dir, "second", id)) {
      Pattern attempting = upstreamLine("info", "Attempting to acquire leader lease...", lock);
      Pattern acquired = upstreamLine("info", "Successfully acquired lease", lock);
      await().atMost(START).until(() -> printed(first, acquired) || printed(second, acquired));
      EngineProcess leader = printed(first, acquired) ? first : second;
      EngineProcess standby = leader == first ? second : first;
      await().atMost(START).until(() -> printed(standby, attempting));
      assertThat(printed(leader, attempting)).as(leader.output()).isTrue();
      String holder = lease(cluster, id).getSpec().getHolderIdentity();
      assertThat(holder).isNotBlank();
      assertThat(printed(standby, acquired)).as("one leader at a time").isFalse();

      leader.terminate();
      assertThat(leader.awaitExit(60)).as(leader.output()).isZero();
      assertThat(leader.jsonLines()).as("a release is not an error")
          .noneMatch(line -> line.path("level").asString().equals("error"))
          .anyMatch(line -> line.path("msg").asString().equals("Released lease")
              && line.path("level").asString().equals("info") && line.path("lock").asString().equals(lock));
      // Released as client-go releases: the standby then takes the lease over, with another identity.
      await().atMost(START).until(() -> printed(standby, acquired));
      assertThat(lease(cluster, id).getSpec().getHolderIdentity()).isNotBlank().isNotEqualTo(holder);
    }
  }

  @Test
  void aReleasedLeaseNamesNoHolder(LocalCluster cluster, @TempDir Path dir) throws Exception {
    String id = leaseId(cluster);
    try (EngineProcess only = replica(cluster, dir, "only", id)) {
      await().atMost(START).until(() -> printed(only,
          upstreamLine("info", "Successfully acquired lease", cluster.namespace() + "/" + id)));
      only.terminate();
      assertThat(only.awaitExit(60)).as(only.output()).isZero();
    }
    Lease released = lease(cluster, id);
    assertThat(released.getSpec().getHolderIdentity()).isNullOrEmpty();
    assertThat(released.getSpec().getLeaseDurationSeconds()).isEqualTo(1);
  }

  @Test
  void aLeaseTakenAwayIsLostLoggedAsUpstreamAndEndsTheProcessWithOne(LocalCluster cluster, @TempDir Path dir)
      throws Exception {
    String id = leaseId(cluster);
    String lock = cluster.namespace() + "/" + id;
    try (EngineProcess leader = replica(cluster, dir, "leader", id)) {
      await().atMost(START).until(() -> printed(leader, upstreamLine("info", "Successfully acquired lease", lock)));

      // Someone else holds it now, for an hour: every renewal fails until the renew deadline passes.
      // (Read and replaced, again if a renewal came in between.)
      await().atMost(START).ignoreExceptions().until(() -> {
        cluster.client().leases().inNamespace(cluster.namespace()).resource(new LeaseBuilder(lease(cluster, id))
            .editSpec().withHolderIdentity("thief").withLeaseDurationSeconds(3600)
            .withRenewTime(ZonedDateTime.now()).endSpec().build()).update();
        return true;
      });

      Integer exit = leader.awaitExit(90);
      assertThat(exit).as(leader.output()).isEqualTo(1);
      assertThat(leader.jsonLines())
          .anyMatch(line -> line.path("msg").asString().equals("Failed to renew lease")
              && line.path("level").asString().equals("info") && line.path("lock").asString().equals(lock)
              && line.has("err"))
          .anyMatch(LeaderElectionIT::terminating);
      assertThat(lease(cluster, id).getSpec().getHolderIdentity()).as("a lost lease is not released")
          .isEqualTo("thief");
    }
  }

  /** Metacontroller's last line when its lease is lost. */
  private static boolean terminating(JsonNode line) {
    return line.path("level").asString().equals("error") && line.path("msg").asString().equals("Terminating")
        && line.path("error").asString().equals("leader election lost");
  }
}
