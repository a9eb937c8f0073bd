package dev.metareactor.engine.server;

import dev.metareactor.engine.config.LeaderElectionSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --leader-election}: the engine hosts controllers only while it holds the Lease
 * {@code <namespace>/<--leader-election-id>}, with controller-runtime's timings (lease 15 s, renew deadline 10 s,
 * retry every 2 s). Losing the lease ends the process, as upstream: a replica that lost it must not keep writing.
 *
 * <p>It logs client-go's lines {@code attempting to acquire leader lease ...} and
 * {@code successfully acquired lease ...}, which tooling (and Metacontroller's own example test) looks for.
 */
final class LeaderElection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);
  private static final Duration LEASE_DURATION = Duration.ofSeconds(15);
  private static final Duration RENEW_DEADLINE = Duration.ofSeconds(10);
  private static final Duration RETRY_PERIOD = Duration.ofSeconds(2);
  private static final Path POD_NAMESPACE = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;
  private CompletableFuture<?> running;

  /**
   * @throws IllegalArgumentException when no namespace is given and the process does not run in a pod
   */
  LeaderElection(KubernetesClient client, LeaderElectionSettings settings, String identity) {
    this.client = Objects.requireNonNull(client, "client");
    this.namespace = namespace(settings);
    this.name = settings.id();
    this.identity = Objects.requireNonNull(identity, "identity");
  }

  private static String namespace(LeaderElectionSettings settings) {
    if (!settings.namespace().isBlank()) {
      return settings.namespace();
    }
    try {
      return Files.readString(POD_NAMESPACE, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new IllegalArgumentException("unable to find leader election namespace: not running in-cluster, "
          + "please specify --leader-election-namespace");
    }
  }

  /**
   * Starts campaigning in the background.
   *
   * @param onLeading runs once the lease is held
   * @param onLost runs if the lease is lost after it was held
   */
  synchronized void start(Runnable onLeading, Runnable onLost) {
    String lease = namespace + "/" + name;
    LOG.info("attempting to acquire leader lease {}...", lease);
    LeaderCallbacks callbacks = new LeaderCallbacks(
        () -> {
          LOG.info("successfully acquired lease {}", lease);
          onLeading.run();
        },
        () -> {
          LOG.error("leader election lost: lease {} is no longer held by {}", lease, identity);
          onLost.run();
        },
        leader -> LOG.info("new leader elected: {}", leader));
    running = client.leaderElector()
        .withConfig(new LeaderElectionConfigBuilder()
            .withName(name)
            .withLock(new LeaseLock(namespace, name, identity))
            .withLeaseDuration(LEASE_DURATION)
            .withRenewDeadline(RENEW_DEADLINE)
            .withRetryPeriod(RETRY_PERIOD)
            .withReleaseOnCancel(true)
            .withLeaderCallbacks(callbacks)
            .build())
        .build()
        .start();
  }

  /** Stops campaigning and releases the lease if held, so a standby takes over at once. */
  @Override
  public synchronized void close() {
    if (running != null) {
      running.cancel(true);
      running = null;
    }
  }
}
