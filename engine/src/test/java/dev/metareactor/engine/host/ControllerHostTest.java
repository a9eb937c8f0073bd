package dev.metareactor.engine.host;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.deleted;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.selector.LabelSelector;
import dev.metareactor.engine.testing.FakeInformerLease;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * The controller host in the middle tier: the real {@link ControllerHost} over an in-memory informer of controller
 * objects, fixed discovery, an API that records the Events written, and a controller kind whose controllers only
 * record their lifecycle. No cluster; what is checked is which controller runs for which object, and the Events.
 */
class ControllerHostTest {

  private static final ApiResource WIDGETS = new ApiResource("test.metareactor.dev", "v1", "widgetcontrollers",
      "WidgetController", false, Set.of("status"));

  private final RecordingApi api = new RecordingApi();
  private final FakeInformers informers = new FakeInformers();
  private final FakeInformerLease objects = informers.of(WIDGETS);
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private final ControllerContext context = new ControllerContext(EngineCommand.parse(), new FixedDiscovery(WIDGETS),
      informers, api, new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"),
      hooks, new SimpleMeterRegistry(), Scheduling.production());
  /** What every controller built so far did, in order: "build w1 #1", "start w1 #1", "stop w1 #1"... */
  private final List<String> lifecycle = new CopyOnWriteArrayList<>();
  /** Objects whose controllers fail to build, with the message; and those whose controllers fail to start. */
  private final Map<String, String> unbuildable = new ConcurrentHashMap<>();
  private final Map<String, String> unstartable = new ConcurrentHashMap<>();
  /** How many controllers were built per object: each gets the next number ("w1 #2" is the second for w1). */
  private final Map<String, AtomicInteger> built = new ConcurrentHashMap<>();
  private ControllerHost host;

  @AfterEach
  void close() {
    if (host != null) {
      host.close();
    }
    hooks.close();
  }

  @Test
  void hostsAControllerPerObjectAndReportsItsStart() {
    host = start(LabelSelector.parse(""));

    objects.deliver(added(widget("w1", "{\"x\": 1}", Map.of())));

    await().until(() -> lifecycle.contains("start w1 #1"));
    await().until(host::isReady);
    assertThat(host.phase("w1")).contains(HostedController.Phase.RUNNING);
    await().until(() -> reasons("w1").equals(List.of("Starting", "Started")));
  }

  @Test
  void replacesTheControllerWhenTheSpecChangesAndOnlyThen() {
    host = start(LabelSelector.parse(""));
    KubeObject first = widget("w1", "{\"x\": 1}", Map.of());
    objects.deliver(added(first));
    await().until(() -> lifecycle.contains("start w1 #1"));

    KubeObject relabelled = widget("w1", "{\"x\": 1}", Map.of("team", "a"));
    objects.deliver(updated(first, relabelled));
    KubeObject changed = widget("w1", "{\"x\": 2}", Map.of("team", "a"));
    objects.deliver(updated(relabelled, changed));

    await().until(() -> lifecycle.contains("start w1 #2"));
    assertThat(lifecycle).containsExactly("build w1 #1", "start w1 #1", "stop w1 #1", "build w1 #2", "start w1 #2");
    // The second Starting and Started repeat the first ones word for word: the recorder counts them on those.
    await().until(() -> reasons("w1").equals(List.of("Starting", "Started", "Stopping", "Stopped"))
        && api.actions().stream().filter(action -> action.resource().equals("events")
            && action.verb().equals("patch")).count() == 2);
  }

  @Test
  void retiresTheControllerOfADeletedObjectButOnlyStopsOneNoLongerTargeted() {
    host = start(LabelSelector.parse("engine=this"));
    KubeObject deleted = widget("deleted", "{}", Map.of("engine", "this"));
    KubeObject moved = widget("moved", "{}", Map.of("engine", "this"));
    objects.deliver(added(deleted));
    objects.deliver(added(moved));
    await().until(() -> lifecycle.containsAll(List.of("start deleted #1", "start moved #1")));

    objects.deliver(deleted(deleted));
    objects.deliver(updated(moved, widget("moved", "{}", Map.of("engine", "other"))));

    await().until(() -> lifecycle.containsAll(List.of("retire deleted #1", "stop moved #1")));
    assertThat(lifecycle).doesNotContain("stop deleted #1", "retire moved #1");
    assertThat(host.phase("deleted")).isEmpty();
    assertThat(host.phase("moved")).isEmpty();
  }

  @Test
  void hostsOnlyObjectsTheTargetSelectorMatches() {
    host = start(LabelSelector.parse("engine=this"));

    objects.deliver(added(widget("theirs", "{}", Map.of("engine", "other"))));
    objects.deliver(added(widget("ours", "{}", Map.of("engine", "this"))));

    await().until(() -> lifecycle.contains("start ours #1"));
    await().until(host::isReady);
    assertThat(lifecycle).noneMatch(entry -> entry.contains("theirs"));
  }

  @Test
  void anObjectThatCannotBeHostedGetsOneCreateErrorAndTheOthersRunOn() {
    unbuildable.put("broken", "spec.parentResource.resource: must not be empty");
    host = start(LabelSelector.parse(""));

    KubeObject broken = widget("broken", "{}", Map.of());
    objects.deliver(added(broken));
    objects.deliver(added(widget("fine", "{}", Map.of())));
    objects.deliver(updated(broken, widget("broken", "{}", Map.of("touched", "yes")))); // same spec: no new try

    await().until(() -> lifecycle.contains("start fine #1"));
    await().until(host::isReady);
    await().until(() -> reasons("broken").equals(List.of("CreateError")));
    assertThat(messages("broken"))
        .containsExactly("Cannot create new controller: spec.parentResource.resource: must not be empty");
    assertThat(host.phase("broken")).isEmpty();

    unbuildable.remove("broken");
    objects.deliver(updated(broken, widget("broken", "{\"fixed\": true}", Map.of())));
    await().until(() -> lifecycle.contains("start broken #1"));
  }

  @Test
  void aControllerThatFailsToStartIsReportedAndStopped() {
    unstartable.put("w1", "hook TLS: no certificate in Secret default/hook-tls");
    host = start(LabelSelector.parse(""));

    objects.deliver(added(widget("w1", "{}", Map.of())));

    await().until(() -> lifecycle.contains("stop w1 #1"));
    await().until(() -> reasons("w1").equals(List.of("Starting", "CreateError")));
    assertThat(messages("w1")).containsExactly("Starting controller: w1",
        "Cannot create new controller: hook TLS: no certificate in Secret default/hook-tls");
  }

  @Test
  void closeStopsEveryController() {
    host = start(LabelSelector.parse(""));
    objects.deliver(added(widget("a", "{}", Map.of())));
    objects.deliver(added(widget("b", "{}", Map.of())));
    await().until(() -> lifecycle.containsAll(List.of("start a #1", "start b #1")));

    host.close();

    assertThat(lifecycle).contains("stop a #1", "stop b #1").noneMatch(entry -> entry.startsWith("retire"));
  }

  // ---- the fixture

  private ControllerHost start(LabelSelector target) {
    ControllerHost started = new ControllerHost(new ControllerKind("WidgetController", "test.metareactor.dev/v1",
        "widgetcontrollers", "widget-metacontroller", this::build), context, target);
    started.start();
    return started;
  }

  private HostedController build(KubeObject object, ControllerContext given) {
    assertThat(given).isSameAs(context);
    String problem = unbuildable.get(object.name());
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    int number = built.computeIfAbsent(object.name(), name -> new AtomicInteger()).incrementAndGet();
    return new RecordingController(object.name() + " #" + number, unstartable.get(object.name()));
  }

  /** A controller that does nothing but say what is done to it. */
  private final class RecordingController implements HostedController {
    private final String id;
    private final String startFailure;
    private volatile Phase phase = Phase.NEW;

    RecordingController(String id, String startFailure) {
      this.id = id;
      this.startFailure = startFailure;
      lifecycle.add("build " + id);
    }

    @Override
    public Mono<Void> start() {
      return Mono.fromRunnable(() -> {
        lifecycle.add("start " + id);
        if (startFailure != null) {
          throw new IllegalStateException(startFailure);
        }
        phase = Phase.RUNNING;
      });
    }

    @Override
    public Mono<OneShot> startOneShot() {
      return Mono.error(new UnsupportedOperationException("the host never begins a controller for one-shot syncs"));
    }

    @Override
    public Phase phase() {
      return phase;
    }

    @Override
    public Mono<Void> stop(Duration drainTimeout) {
      return end("stop");
    }

    @Override
    public Mono<Void> retire(Duration drainTimeout) {
      return end("retire");
    }

    private Mono<Void> end(String how) {
      return Mono.fromRunnable(() -> {
        if (phase != Phase.STOPPED) {
          phase = Phase.STOPPED;
          lifecycle.add(how + " " + id);
        }
      });
    }
  }

  private static KubeObject widget(String name, String spec, Map<String, String> labels) {
    ObjectNode object = (ObjectNode) KubeJson.mapper().readTree("{\"apiVersion\": \"test.metareactor.dev/v1\", "
        + "\"kind\": \"WidgetController\", \"metadata\": {\"name\": \"" + name + "\", \"uid\": \"uid-" + name
        + "\"}, \"spec\": " + spec + "}");
    labels.forEach((key, value) -> object.withObject("metadata").withObject("labels").put(key, value));
    return KubeObject.of(object);
  }

  /** The reasons of the Events written about the object {@code name}, in order. */
  private List<String> reasons(String name) {
    return events(name).stream().map(event -> event.path("reason").asString()).toList();
  }

  private List<String> messages(String name) {
    return events(name).stream().map(event -> event.path("message").asString()).toList();
  }

  private List<ObjectNode> events(String name) {
    return api.actions().stream()
        .filter(action -> action.verb().equals("create") && action.resource().equals("events"))
        .map(action -> (ObjectNode) KubeJson.mapper().readTree(action.body()))
        .filter(event -> event.path("involvedObject").path("name").asString().equals(name))
        .toList();
  }
}
