package dev.metareactor.engine.shard;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;

/**
 * Which shards of the installation are live, as this replica sees their Leases, and who owns what.
 *
 * <p>A shard is live while its lease has a holder and has been renewed within its duration, measured by this
 * replica's clock from when it saw the lease change (as client-go judges a leader's lease, so clocks of different
 * machines need not agree). A released lease (no holder) or a deleted one ends the shard at once. This replica's own
 * shard is always live: it runs only while it holds its lease. Before this replica has seen the other leases, it
 * knows only itself.
 *
 * <p>{@link #observe}, {@link #forget} and {@link #tick} may run on any thread; {@link #live()} and {@link #owner}
 * never block. Every change of the live set is published on {@link #changes()}.
 */
public final class Membership {

  private final String self;
  private final Duration defaultDuration;
  private final LongSupplier nanoTime;
  private final Map<String, Seen> leases = new ConcurrentHashMap<>();
  private final Sinks.Many<List<String>> changes = Sinks.many().multicast().directBestEffort();
  private volatile List<String> live;

  /** A lease as last seen: its holder, its spec as text (a change restarts its clock), when it changed. */
  private record Seen(KubeObject lease, String holder, String spec, long changedAt, Duration duration) {}

  /**
   * @param self this replica's shard
   * @param defaultDuration a lease's duration when it states none
   * @param nanoTime the clock leases are timed by
   */
  public Membership(String self, Duration defaultDuration, LongSupplier nanoTime) {
    this.self = Objects.requireNonNull(self, "self");
    this.defaultDuration = Objects.requireNonNull(defaultDuration, "defaultDuration");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.live = List.of(self);
  }

  /** This replica's shard. */
  public String self() {
    return self;
  }

  /** A shard lease as it is now (added or changed). Leases without the shard label are ignored. */
  public void observe(KubeObject lease) {
    String shard = lease.labels().get(ShardKeys.SHARD);
    if (shard == null) {
      return;
    }
    JsonNode spec = lease.toTree().path("spec");
    String text = KubeJson.text(spec);
    long seconds = spec.path("leaseDurationSeconds").asLong(0);
    Duration duration = seconds > 0 ? Duration.ofSeconds(seconds) : defaultDuration;
    long now = nanoTime.getAsLong();
    leases.compute(shard, (name, before) -> before != null && before.spec().equals(text)
        ? new Seen(lease, before.holder(), text, before.changedAt(), duration)
        : new Seen(lease, spec.path("holderIdentity").asString(""), text, now, duration));
    tick();
  }

  /** A shard lease deleted. */
  public void forget(KubeObject lease) {
    String shard = lease.labels().get(ShardKeys.SHARD);
    if (shard != null) {
      leases.remove(shard);
      tick();
    }
  }

  /** Re-evaluates which leases have expired; publishes the live set if it changed. */
  public synchronized void tick() {
    long now = nanoTime.getAsLong();
    List<String> shards = new ArrayList<>();
    shards.add(self);
    leases.forEach((shard, seen) -> {
      if (!shard.equals(self) && !seen.holder().isEmpty() && now - seen.changedAt() < seen.duration().toNanos()) {
        shards.add(shard);
      }
    });
    Collections.sort(shards);
    List<String> current = List.copyOf(shards);
    if (!current.equals(live)) {
      live = current;
      changes.tryEmitNext(current);
    }
  }

  /** The live shards, sorted. */
  public List<String> live() {
    return live;
  }

  /** Whether {@code shard} is live. */
  public boolean isLive(String shard) {
    return live.contains(shard);
  }

  /** The live shard that owns {@code key} (an object's UID). */
  public String owner(String key) {
    return Objects.requireNonNull(Rendezvous.owner(key, live), "the live set holds this replica");
  }

  /** The lease of {@code shard} as last seen, if any. */
  public Optional<KubeObject> lease(String shard) {
    Seen seen = leases.get(shard);
    return seen == null ? Optional.empty() : Optional.of(seen.lease());
  }

  /** The live set each time it changes (not the current one). */
  public Flux<List<String>> changes() {
    return changes.asFlux();
  }
}
