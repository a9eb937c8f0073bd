package dev.metareactor.engine.server;

import dev.metareactor.engine.config.LeaderElectionSettings;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ApiWriter;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.shard.ShardKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code --leader-election}: the engine hosts controllers only while it holds the Lease
 * {@code <namespace>/<--leader-election-id>}, with controller-runtime's timings (lease 15 s, renew deadline 10 s,
 * retry every 2 s) and client-go's algorithm: a lease held by another replica is taken only once that replica has
 * not renewed it for a whole lease duration (by this replica's clock, from when it last saw the lease change); the
 * leader renews every retry period and has lost the lease when no renewal succeeded for the renew deadline.
 * Losing the lease ends the process, as upstream: a replica that lost it must not keep writing.
 *
 * <p>A graceful stop releases the lease as client-go does (holder cleared, duration 1 s), so a standby takes over at
 * once; upstream does not release it, and its standby waits out the 15 s.
 *
 * <p>Logs Metacontroller v4.17.2's lines (client-go's) as it prints them: {@code Attempting to acquire leader
 * lease...}, {@code Successfully acquired lease} and, at info, {@code Failed to renew lease} with its {@code err},
 * each with the lease as {@code lock}; the process then ends with Metacontroller's error line {@code Terminating}
 * ({@code error: leader election lost}). Tooling, and Metacontroller's own example test, look for them.
 */
final class LeaderElection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);
  static final ApiResource LEASES = new ApiResource("coordination.k8s.io", "v1", "leases", "Lease", true, Set.of());
  private static final Duration LEASE_DURATION = Duration.ofSeconds(15);
  private static final Duration RENEW_DEADLINE = Duration.ofSeconds(10);
  private static final Duration RETRY_PERIOD = Duration.ofSeconds(2);
  /** client-go's jitter while acquiring: up to 1.2 times the retry period. */
  private static final double JITTER = 1.2;
  private static final DateTimeFormatter MICRO_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSX").withZone(ZoneOffset.UTC);

  private final ApiWriter api;
  private final String namespace;
  private final String name;
  private final Map<String, String> labels;
  /** {@code leader}, or {@code shard} for a shard's own lease (the first log line says which). */
  private final String role;
  private final String identity;
  private final String lock;
  private final Scheduling scheduling;
  private final Scheduler scheduler;

  // Written only on the scheduler's worker.
  private @Nullable KubeObject observed;
  private @Nullable String observedSpec;
  private long observedAt;
  /**
   * When the last successful acquisition or renewal was sent (not answered): another replica saw the lease change
   * no earlier than that, so it cannot take the lease before that time plus the lease duration. Read by
   * {@link #refusal} from any thread.
   */
  private volatile long renewedAt;
  private volatile boolean leading;
  // Set by start(), before the first attempt.
  private @Nullable Runnable onLeading;
  private @Nullable Runnable onLost;
  private @Nullable Disposable next;
  private boolean closed;

  /**
   * @throws IllegalArgumentException when no namespace is given and the process does not run in a pod
   */
  LeaderElection(ApiWriter api, LeaderElectionSettings settings, String identity, Scheduling scheduling) {
    this(api, namespace(settings), settings.id(), Map.of(), "leader", identity, scheduling);
  }

  private LeaderElection(ApiWriter api, String namespace, String name, Map<String, String> labels, String role,
      String identity, Scheduling scheduling) {
    this.api = Objects.requireNonNull(api, "api");
    this.scheduling = Objects.requireNonNull(scheduling, "scheduling");
    this.scheduler = Schedulers.single(scheduling.work());
    this.namespace = namespace;
    this.name = name;
    this.labels = Map.copyOf(labels);
    this.role = role;
    this.identity = Objects.requireNonNull(identity, "identity");
    this.lock = namespace + "/" + name;
  }

  /**
   * A shard's own lease with {@code --sharding}: {@code <--leader-election-id>-shard-<shard>} in the leader lease's
   * namespace, labelled with the installation and the shard, held by this process. The same algorithm and timings
   * as the leader lease: a shard is taken only once a former holder (a previous process of the same shard) has not
   * renewed it for a lease duration, and a replica that cannot renew it has lost its shard.
   *
   * @throws IllegalArgumentException when no namespace is given and the process does not run in a pod
   */
  static LeaderElection forShard(ApiWriter api, LeaderElectionSettings settings, String shard, String identity,
      Scheduling scheduling) {
    return new LeaderElection(api, namespace(settings), ShardKeys.leaseName(settings.id(), shard),
        Map.of(ShardKeys.INSTALLATION, settings.id(), ShardKeys.SHARD, shard), "shard", identity, scheduling);
  }

  /** The lease's namespace. */
  String namespace() {
    return namespace;
  }

  /** How long a lease lasts without a renewal. */
  static Duration leaseDuration() {
    return LEASE_DURATION;
  }

  private static String namespace(LeaderElectionSettings settings) {
    if (!settings.namespace().isBlank()) {
      return settings.namespace();
    }
    try {
      return Files.readString(KubeConfig.serviceAccountDirectory().resolve("namespace"), StandardCharsets.UTF_8)
          .strip();
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
  void start(Runnable onLeading, Runnable onLost) {
    scheduler.schedule(() -> {
      this.onLeading = Objects.requireNonNull(onLeading, "onLeading");
      this.onLost = Objects.requireNonNull(onLost, "onLost");
      LOG.atInfo().setMessage("Attempting to acquire " + role + " lease...").addKeyValue("lock", lock).log();
      attempt();
    });
  }

  /**
   * Why this replica must not act for the lease now, or {@code null} while it holds it by its own clock: it leads and
   * its last successful renewal was sent less than the renew deadline ago. The renewal loop reaches the same verdict
   * only at its next attempt, and a process stopped past its lease (SIGSTOP, a frozen VM) runs whatever was due
   * first when it wakes up — its syncs and their writes among it; this answers at once, from any thread.
   */
  @Nullable String refusal() {
    if (!leading) {
      return "this replica does not hold the " + role + " lease " + lock;
    }
    long since = scheduling.nanoTime().getAsLong() - renewedAt;
    return since < RENEW_DEADLINE.toNanos() ? null : "the " + role + " lease " + lock + " was last renewed "
        + Duration.ofNanos(since).toMillis() / 1000.0 + "s ago (renew deadline " + RENEW_DEADLINE.toSeconds()
        + "s): another replica may hold it by now";
  }

  /** One try to acquire or renew, then the next one scheduled; on the worker. */
  private void attempt() {
    if (closed) {
      return;
    }
    long sent = scheduling.nanoTime().getAsLong();
    next = tryAcquireOrRenew()
        .onErrorResume(Taken.class, e -> Mono.fromRunnable(() -> taken(e)).subscribeOn(scheduler)
            .then(Mono.never()))
        .onErrorResume(e -> {
          LOG.atDebug().setMessage("Failed to acquire or renew lease").addKeyValue("lock", lock)
              .addKeyValue("err", e.getMessage()).log();
          return Mono.just(false);
        })
        .publishOn(scheduler)
        .subscribe(held -> afterAttempt(held, sent));
  }

  /** The lease was taken from this replica while it held it: lost at once, no more attempts; on the worker. */
  private void taken(Taken how) {
    if (leading && !closed) {
      leading = false;
      LOG.atInfo().setMessage("Failed to renew lease").addKeyValue("lock", lock).addKeyValue("err", how.getMessage())
          .log();
      Objects.requireNonNull(onLost, "set by start()").run();
    }
  }

  /** @param sent when the attempt was sent */
  private void afterAttempt(boolean held, long sent) {
    if (closed) {
      return;
    }
    long now = scheduling.nanoTime().getAsLong();
    if (!leading) {
      if (held) {
        renewedAt = sent;
        leading = true;
        LOG.atInfo().setMessage("Successfully acquired lease").addKeyValue("lock", lock).log();
        Objects.requireNonNull(onLeading, "set by start()").run();
      }
      long jittered = (long) (RETRY_PERIOD.toMillis() * (1 + ThreadLocalRandom.current().nextDouble(JITTER)));
      attemptAfter(held ? RETRY_PERIOD : Duration.ofMillis(jittered));
      return;
    }
    if (held) {
      renewedAt = sent;
    } else if (now - renewedAt > RENEW_DEADLINE.toNanos()) {
      leading = false;
      LOG.atInfo().setMessage("Failed to renew lease").addKeyValue("lock", lock)
          .addKeyValue("err", "no renewal succeeded for " + RENEW_DEADLINE.toSeconds() + "s").log();
      Objects.requireNonNull(onLost, "set by start()").run();
      return;
    }
    attemptAfter(RETRY_PERIOD);
  }

  /** The worker cannot keep time: a timer elsewhere brings the next attempt back onto it. */
  private void attemptAfter(Duration delay) {
    next = Mono.delay(delay, scheduling.work()).publishOn(scheduler).subscribe(tick -> attempt());
  }

  /**
   * client-go's tryAcquireOrRenew: the fast path for a leader whose last sight of the lease showed it as the holder,
   * else read, check, take or renew. (The holder check matters: after a failed renewal the lease last seen may be
   * another replica's, and renewing that one would take it from its holder.)
   */
  private Mono<Boolean> tryAcquireOrRenew() {
    Instant now = Instant.now(scheduling.wallClock());
    if (leading && observed != null && leaseValid() && heldBy(observed, identity)) {
      ObjectNode renewal = record(observed, now, true);
      return api.update(LEASES, renewal).map(written -> observe(written.object())).map(lease -> true)
          .onErrorResume(e -> slowPath(now));
    }
    return slowPath(now);
  }

  private Mono<Boolean> slowPath(Instant now) {
    return api.get(LEASES, namespace, name)
        .flatMap(lease -> {
          observe(lease);
          boolean mine = heldBy(lease, identity);
          if (exclusive() && leading && !mine) {
            return Mono.error(new Taken("held by another since this replica held it"));
          }
          if (!heldBy(lease, "") && leaseValid() && !mine) {
            return Mono.just(false);
          }
          return api.update(LEASES, record(lease, now, mine)).map(written -> observe(written.object()))
              .map(written -> true);
        })
        .onErrorResume(e -> ApiException.codeOf(e) == 404 && !(exclusive() && leading),
            e -> api.create(LEASES, newLease(now)).map(written -> observe(written.object())).map(written -> true))
        .onErrorMap(e -> ApiException.codeOf(e) == 404 && exclusive() && leading,
            e -> new Taken("deleted since this replica held it"));
  }

  /**
   * Whether a lease this replica held and then found taken (released by another, given to another, or deleted)
   * ends its hold at once: a shard's lease, which the sharder deletes when it moves a shard's parents away, so the
   * replica must stop syncing them. A leader lease found released is taken again, as client-go does.
   */
  private boolean exclusive() {
    return role.equals("shard");
  }

  /** The lease was taken from this replica. */
  private static final class Taken extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Taken(String how) {
      super("lease " + how, null, false, false);
    }
  }

  private static boolean heldBy(KubeObject lease, String holder) {
    return holder.equals(lease.toTree().path("spec").path("holderIdentity").asString(""));
  }

  /** Remembers the lease; its spec changing (not just being read again) restarts the expiry clock. */
  private KubeObject observe(KubeObject lease) {
    String spec = KubeJson.text(lease.toTree().path("spec"));
    if (!spec.equals(observedSpec)) {
      observedSpec = spec;
      observedAt = scheduling.nanoTime().getAsLong();
    }
    observed = lease;
    return lease;
  }

  private boolean leaseValid() {
    return scheduling.nanoTime().getAsLong() - observedAt < LEASE_DURATION.toNanos();
  }

  /** The lease with this replica as holder, renewed now; acquired now unless it already was ours. */
  private ObjectNode record(KubeObject lease, Instant now, boolean ours) {
    ObjectNode tree = lease.toTree();
    JsonNode old = tree.path("spec");
    ObjectNode spec = KubeJson.nodes().objectNode();
    spec.put("holderIdentity", identity);
    spec.put("leaseDurationSeconds", LEASE_DURATION.toSeconds());
    spec.put("acquireTime",
        ours && old.has("acquireTime") ? old.get("acquireTime").asString() : MICRO_TIME.format(now));
    spec.put("renewTime", MICRO_TIME.format(now));
    spec.put("leaseTransitions", old.path("leaseTransitions").asInt(0) + (ours ? 0 : 1));
    tree.set("spec", spec);
    return tree;
  }

  private ObjectNode newLease(Instant now) {
    ObjectNode lease = KubeJson.nodes().objectNode();
    lease.put("apiVersion", "coordination.k8s.io/v1");
    lease.put("kind", "Lease");
    ObjectNode metadata = lease.putObject("metadata").put("name", name).put("namespace", namespace);
    if (!labels.isEmpty()) {
      metadata.set("labels", KubeJson.mapper().valueToTree(labels));
    }
    lease.putObject("spec")
        .put("holderIdentity", identity)
        .put("leaseDurationSeconds", LEASE_DURATION.toSeconds())
        .put("acquireTime", MICRO_TIME.format(now))
        .put("renewTime", MICRO_TIME.format(now))
        .put("leaseTransitions", 0);
    return lease;
  }

  /**
   * Stops campaigning and, if this replica holds the lease, releases it (holder cleared, duration 1 s) so a standby
   * takes over at once. Blocks for at most the renew deadline.
   */
  @Override
  public void close() {
    Mono.fromCallable(() -> {
          closed = true;
          if (next != null) {
            next.dispose();
          }
          return leading;
        })
        .subscribeOn(scheduler)
        .flatMap(held -> held ? release() : Mono.empty())
        .timeout(RENEW_DEADLINE)
        .onErrorResume(e -> {
          LOG.atError().setMessage("Failed to release lease").addKeyValue("lock", lock)
              .addKeyValue("err", e.getMessage()).log();
          return Mono.empty();
        })
        .block();
    scheduler.dispose();
  }

  private Mono<Void> release() {
    Instant now = Instant.now(scheduling.wallClock());
    return api.get(LEASES, namespace, name)
        .flatMap(lease -> {
          if (!heldBy(lease, identity)) {
            return Mono.empty();
          }
          ObjectNode tree = lease.toTree();
          ObjectNode spec = KubeJson.nodes().objectNode();
          spec.put("leaseDurationSeconds", 1);
          spec.put("acquireTime", MICRO_TIME.format(now));
          spec.put("renewTime", MICRO_TIME.format(now));
          spec.put("leaseTransitions", tree.path("spec").path("leaseTransitions").asInt(0));
          tree.set("spec", spec);
          return api.update(LEASES, tree);
        })
        .doOnNext(released -> LOG.atInfo().setMessage("Released lease").addKeyValue("lock", lock).log())
        .then();
  }
}
