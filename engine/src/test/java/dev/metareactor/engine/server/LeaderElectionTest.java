package dev.metareactor.engine.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.config.LeaderElectionSettings;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.testing.StandInApi;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.node.ObjectNode;

/**
 * The lease as the write fence reads it, against a stand-in API server that keeps one Lease: held by the clock of
 * the replica (its last successful renewal sent less than the renew deadline ago), not by the renewal loop's last
 * verdict. A process stopped past its lease is played by moving the election's monotonic clock forward.
 */
class LeaderElectionTest {

  /** The one Lease the stand-in keeps, or null before it is created. */
  private final AtomicReference<ObjectNode> lease = new AtomicReference<>();
  private final AtomicInteger version = new AtomicInteger();
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);
  private DisposableServer server;
  private KubeApi api;
  private LeaderElection election;

  /** GET answers the Lease (404 before it exists); POST and PUT store the body with the next resourceVersion. */
  private ApiWriter standIn() {
    server = HttpServer.create().host("127.0.0.1").port(0)
        .handle((request, response) -> request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0])
            .flatMap(body -> {
              String method = request.method().name();
              if (method.equals("GET")) {
                ObjectNode held = lease.get();
                return held == null ? response.status(404).sendString(Mono.just("{\"kind\":\"Status\",\"code\":404}"))
                    .then() : response.status(200).sendString(Mono.just(held.toString())).then();
              }
              ObjectNode written = (ObjectNode) KubeJson.mapper().readTree(body);
              ((ObjectNode) written.get("metadata")).put("resourceVersion",
                  Integer.toString(version.incrementAndGet()));
              lease.set(written);
              return response.status(method.equals("POST") ? 201 : 200).sendString(Mono.just(written.toString()))
                  .then();
            }))
        .bindNow();
    api = StandInApi.connect(server.port(), "{}", 2);
    return new ApiWriter(api, new RateLimit(100, 100), new SimpleMeterRegistry());
  }

  @AfterEach
  void stop() {
    if (election != null) {
      election.close();
    }
    if (api != null) {
      api.close();
    }
    if (server != null) {
      server.disposeNow();
    }
  }

  @Test
  void aLeaseIsHeldForTheRenewDeadlineAfterItsLastRenewalByTheReplicasOwnClock() throws Exception {
    Scheduling scheduling = new Scheduling(Schedulers.parallel(), Schedulers.boundedElastic(), clock::get,
        Scheduling.production().wallClock());
    election = new LeaderElection(standIn(), new LeaderElectionSettings(true, "leases", "ns", "lease"), "me",
        scheduling);
    assertThat(election.refusal()).as("before it leads").contains("does not hold the leader lease ns/lease");

    AtomicBoolean leading = new AtomicBoolean();
    election.start(() -> leading.set(true), () -> { });
    await().atMost(Duration.ofSeconds(10)).untilTrue(leading);
    assertThat(election.refusal()).as("just acquired").isNull();

    // The process was stopped for 11 s: the renewal loop has not run since, the fence knows at once.
    clock.addAndGet(Duration.ofSeconds(11).toNanos());
    assertThat(election.refusal()).as("11 s after the last renewal was sent")
        .contains("was last renewed 11.0s ago (renew deadline 10s)");

    // Nobody else took the lease meanwhile: the next renewal succeeds and the fence opens again.
    await().atMost(Duration.ofSeconds(10)).until(() -> election.refusal() == null);
  }
}
