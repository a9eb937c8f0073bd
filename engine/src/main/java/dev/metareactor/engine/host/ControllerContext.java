package dev.metareactor.engine.host;

import dev.metareactor.engine.config.EngineOptions;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.discovery.DiscoveredResources;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.history.SyncHistory;
import dev.metareactor.engine.informer.Informers;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.tracing.Tracing;
import dev.metareactor.http.HookClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * The process-wide services every hosted controller is built from. One instance per engine; the services are
 * shared, so controllers never own (or close) them.
 *
 * @param options the engine's options ({@code --workers}, retry settings, intervals)
 * @param discovery API discovery: resolves the resources a controller names, waiting for ones not served yet
 * @param informers the shared, reference-counted informers
 * @param api every API write (and the rare uncached read) goes through it
 * @param events Kubernetes Events on controller objects and parents
 * @param hooks the hook client
 * @param meters where queue and hook metrics go
 * @param scheduling the schedulers and clocks controllers run on (virtual ones in tests)
 * @param sharding {@code --sharding}: this replica's share of every controller's parents, or none
 * @param fence whether this replica may act now (its lease held by its own clock); a controller asks it before
 *     each sync, and {@code api}'s writes are fenced by it too
 * @param tracing {@code --tracing}: each sync traced, or {@link Tracing#OFF}
 * @param history the ring of recent syncs each sync is kept in ({@code /debug/syncs}), or {@link SyncHistory#OFF}
 */
public record ControllerContext(
    EngineOptions options,
    DiscoveredResources discovery,
    Informers informers,
    ObjectApi api,
    EventRecorder events,
    HookClient hooks,
    MeterRegistry meters,
    Scheduling scheduling,
    Sharding sharding,
    WriteFence fence,
    Tracing tracing,
    SyncHistory history) {

  public ControllerContext {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(discovery, "discovery");
    Objects.requireNonNull(informers, "informers");
    Objects.requireNonNull(api, "api");
    Objects.requireNonNull(events, "events");
    Objects.requireNonNull(hooks, "hooks");
    Objects.requireNonNull(meters, "meters");
    Objects.requireNonNull(scheduling, "scheduling");
    Objects.requireNonNull(sharding, "sharding");
    Objects.requireNonNull(fence, "fence");
    Objects.requireNonNull(tracing, "tracing");
    Objects.requireNonNull(history, "history");
  }

  /** The same services without a ring of recent syncs. */
  public ControllerContext(EngineOptions options, DiscoveredResources discovery, Informers informers, ObjectApi api,
      EventRecorder events, HookClient hooks, MeterRegistry meters, Scheduling scheduling, Sharding sharding,
      WriteFence fence, Tracing tracing) {
    this(options, discovery, informers, api, events, hooks, meters, scheduling, sharding, fence, tracing,
        SyncHistory.OFF);
  }

  /** The same services with {@code api} for this one's (a controller's own view of the API). */
  public ControllerContext withApi(ObjectApi api) {
    return new ControllerContext(options, discovery, informers, api, events, hooks, meters, scheduling, sharding, fence,
        tracing, history);
  }

  /** The same services without tracing. */
  public ControllerContext(EngineOptions options, DiscoveredResources discovery, Informers informers, ObjectApi api,
      EventRecorder events, HookClient hooks, MeterRegistry meters, Scheduling scheduling, Sharding sharding,
      WriteFence fence) {
    this(options, discovery, informers, api, events, hooks, meters, scheduling, sharding, fence, Tracing.OFF,
        SyncHistory.OFF);
  }

  /** The same services without sharding or a lease (a single replica syncs every parent). */
  public ControllerContext(EngineOptions options, DiscoveredResources discovery, Informers informers, ObjectApi api,
      EventRecorder events, HookClient hooks, MeterRegistry meters, Scheduling scheduling) {
    this(options, discovery, informers, api, events, hooks, meters, scheduling, Sharding.disabled(),
        WriteFence.OPEN, Tracing.OFF, SyncHistory.OFF);
  }
}
