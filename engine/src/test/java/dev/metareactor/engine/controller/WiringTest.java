package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static dev.metareactor.engine.testing.ObjectEvents.added;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.ChildResourceRule;
import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookConfig;
import dev.metareactor.engine.hook.HookMaterials;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.informer.InformerLease;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.shard.ShardParticipant;
import dev.metareactor.engine.shard.Sharding;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What a kind's {@code wire()} is handed: informers it takes are held, events it routes reach the queue, until the
 * controller gives them back; and once {@code wire()} returned, nothing of it can be used (only the queue a router
 * was given goes on).
 */
class WiringTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, meters);
  private final ControllerContext context = new ControllerContext(EngineCommand.parse(),
      new FixedDiscovery(THINGS, CONFIG_MAPS), informers, api,
      new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"), hooks, meters,
      Scheduling.production());
  private final Holdings holdings = new Holdings();
  private final List<ParentKey> queued = new ArrayList<>();
  private final Wiring<ParentKey> wiring;

  WiringTest() {
    Map<String, Optional<HookConfig>> hookConfigs = new LinkedHashMap<>();
    hookConfigs.put("sync", Optional.empty());
    hookConfigs.put("finalize", Optional.empty());
    hookConfigs.put("customize", Optional.empty());
    HookMaterials materials = new HookMaterials(informers, context.discovery(), hooks, context.scheduling(),
        problem -> {}, warning -> {}, WriteFence.OPEN);
    wiring = new Wiring<>("CompositeController", "things", KubeJson.nodes().objectNode(), context, hookConfigs,
        Map.of(), materials, new ShardParticipant(Sharding.disabled(), informers, api, meters, "CompositeController",
            "things", System::nanoTime), new Finalizers("things.test/finalizer", api),
        ChildApplier.of(context.options().applyStrategy(), api, context.options().ssaFieldManager(), Map.of()),
        new SyncMetrics(meters, "things", 1), 1, new OwnWrites(), (key, trigger) -> queued.add(key),
        LoggerFactory.getLogger(WiringTest.class), holdings);
  }

  @AfterEach
  void close() {
    holdings.release();
    hooks.close();
  }

  @Test
  void whatWireTakesIsHeldAndRoutedUntilTheControllerGivesItBack() {
    InformerLease parents = wiring.acquireSynced(THINGS);
    List<ChildType> children = wiring.childTypes(
        List.of(new ChildResourceRule(new ResourceRule("v1", "configmaps"), UpdateMethod.ON_DELETE)),
        List.of(CONFIG_MAPS));
    BiConsumer<ParentKey, Trigger> queue = wiring.queue();
    wiring.subscribe(parents, "parent",
        event -> queue.accept(new ParentKey(event.object().namespace(), event.object().name()), event.trigger()));
    wiring.close();
    assertThat(children).extracting(ChildType::resource).containsExactly(CONFIG_MAPS);
    assertThat(informers.held()).containsOnlyKeys(THINGS.toString(), CONFIG_MAPS.toString());

    KubeObject thing = object(THINGS, "team", "a").build();
    informers.of(THINGS).put(thing).deliver(added(thing));
    assertThat(queued).as("routed after wire() returned").containsExactly(new ParentKey("team", "a"));

    holdings.stop();
    informers.of(THINGS).deliver(added(thing));
    assertThat(queued).as("routed once the controller stopped").hasSize(1);
    holdings.release();
    assertThat(informers.held()).as("informers held once the queue drained").isEmpty();
  }

  @Test
  void onceWireReturnedNothingOfTheWiringCanBeUsed() {
    wiring.close();

    List<ThrowingCallable> calls = List.of(
        () -> wiring.acquire(THINGS), () -> wiring.acquireSynced(THINGS), () -> wiring.acquireOwned(CONFIG_MAPS),
        () -> wiring.childTypes(List.of(), List.of()).size(), () -> wiring.queue(),
        () -> wiring.subscribe(informers.of(THINGS), "parent", event -> {}), () -> wiring.onStop(() -> {}),
        () -> wiring.finalizers(), () -> wiring.applier(), () -> wiring.ownLabels(), () -> wiring.workers(),
        () -> wiring.chosenHook("sync", ChosenHook.Purpose.DESIRED_STATE),
        () -> wiring.relatedObjects());
    for (ThrowingCallable call : calls) {
      assertThatThrownBy(call).isInstanceOf(IllegalStateException.class).hasMessageContaining("only for wire()");
    }
    assertThat(informers.held()).isEmpty();
  }

  @Test
  void relatedObjectsAreMadeOnce() {
    wiring.relatedObjects();
    assertThatThrownBy(wiring::relatedObjects).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("called already");
  }
}
