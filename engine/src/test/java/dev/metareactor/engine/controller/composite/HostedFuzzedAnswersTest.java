package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.Scheduling;
import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.AnswerRules;
import dev.metareactor.engine.testing.FakeInformers;
import dev.metareactor.engine.testing.FixedDiscovery;
import dev.metareactor.engine.testing.FuzzCases;
import dev.metareactor.engine.testing.FuzzedAnswers;
import dev.metareactor.engine.testing.FuzzedAnswers.Case;
import dev.metareactor.engine.testing.FuzzedAnswers.Verdict;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import dev.metareactor.engine.testing.RecordingApi;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What an operator sees of a generated answer ({@link FuzzedAnswers}): a whole CompositeController hosted as the
 * engine hosts it, over in-memory informers and API, calling a real hook over HTTP, as {@code FencedSyncTest} does.
 * The middle tier's {@code CompositeFuzzedAnswersTest} holds every answer to the delete and write rules; here, a
 * refused answer must reach the operator: the sync fails with a {@code SyncError} Warning on the parent saying why,
 * and a warning log line naming the controller, the parent and the same reason; nothing is written but the Event; the
 * controller keeps running. Every answer built invalid is refused so; a valid one, without the delete guard, is not.
 * Reporting is {@code AbstractHostedController}'s, the same for every kind, so one kind is enough here.
 *
 * <p>100 cases per run, each a controller started, one sync and the controller stopped (a tenth of the middle
 * tier's: each costs a controller and an HTTP call), from the fixed seed {@link FuzzCases#SEED}; a failure names its
 * case's seed to run it alone. More, or others, by hand: {@code -Dmetareactor.fuzz.cases=1000},
 * {@code -Dmetareactor.fuzz.seed=<n>}.
 */
class HostedFuzzedAnswersTest {

  private static final FuzzCases CASES = FuzzCases.of(100);
  private static final ApiResource THINGS = CompositeSyncFixture.THINGS;
  private static final ApiResource CONFIG_MAPS = CompositeSyncFixture.CONFIG_MAPS;
  private static final String NAMESPACE = CompositeSyncFixture.NAMESPACE;
  private static final String PARENT_UID = "parent-uid";
  private static final FuzzedAnswers ANSWERS = new FuzzedAnswers(new FuzzedAnswers.Shape("children",
      new FuzzedAnswers.ChildKind("v1", "ConfigMap", "data"),
      List.of(new FuzzedAnswers.ChildKind("v1", "Secret", "data"), new FuzzedAnswers.ChildKind("v2", "ConfigMap",
          "data")),
      NAMESPACE, List.of(ChildSelector.CONTROLLER_UID_LABEL), List.of(), false, List.of(),
      new FuzzedAnswers.Owner(THINGS.apiVersion(), THINGS.kind(), "p", PARENT_UID)));
  /**
   * Shapes whose answer the hook server does not send as generated: NaN and infinities go as strings, and a number
   * of 401 characters passes the hook client's parse limit (the middle tier tries them as trees).
   */
  private static final Set<String> CHANGED_ON_THE_WIRE = Set.of("resync NaN-ish", "resync negative");

  /** The answer of the case running now. */
  private final AtomicReference<JsonNode> answer = new AtomicReference<>();
  private final HookServer hook = HookServer.builder().route("/sync", request -> answer.get()).start();
  private final HookClient hooks = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  /** The controller's log lines at warn and above, of the case running now. */
  private final ListAppender<ILoggingEvent> lines = new ListAppender<>();

  @AfterEach
  void close() {
    hooks.close();
    hook.close();
  }

  @Test
  void aRefusedAnswerIsASyncErrorOnTheParentAndALogLineAndNothingElse() {
    Logger controllerLog = (Logger) LoggerFactory.getLogger(CompositeController.class);
    lines.start();
    controllerLog.addAppender(lines);
    controllerLog.setAdditive(false); // a warning per refused answer: kept here, not printed
    controllerLog.setLevel(Level.WARN); // whatever the engine's other lines are quieted to
    int[] counts = new int[2]; // refused, converged
    try {
      AnswerRules.quietly(() -> CASES.run((random, i) -> {
        synchronized (lines) { // the appender's lock, which its workers' lines take
          lines.list.clear();
        }
        Case fuzzed = ANSWERS.next(random);
        try {
          counts[sync(fuzzed, random) ? 0 : 1]++;
        } catch (AssertionError e) {
          throw new AssertionError(e.getMessage() + "\nthe case: " + fuzzed, e);
        }
      }));
    } finally {
      controllerLog.detachAppender(lines);
      controllerLog.setAdditive(true);
      controllerLog.setLevel(null);
    }
    if (CASES.count() >= 100) {
      assertThat(counts[0]).as("refused answers: the run tried them").isGreaterThanOrEqualTo(CASES.count() / 5);
      assertThat(counts[1]).as("accepted answers: the run tried them").isGreaterThanOrEqualTo(CASES.count() / 5);
    }
  }

  /** One sync of the parent {@code p} given {@code fuzzed} by a hosted controller; whether it was refused. */
  private boolean sync(Case fuzzed, SplittableRandom random) {
    boolean deleteGuard = random.nextBoolean();
    answer.set(fuzzed.answer().body());
    RecordingApi api = new RecordingApi();
    FakeInformers informers = new FakeInformers();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    ControllerContext context = new ControllerContext(EngineCommand.parse(), new FixedDiscovery(THINGS, CONFIG_MAPS),
        informers, api, new EventRecorder(api, new RateLimit(100, 100), Scheduling.production().wallClock(), "test"),
        hooks, meters, Scheduling.production());
    HostedController controller = CompositeController.kind().factory().create(KubeObject.of((ObjectNode)
        KubeJson.mapper().readTree("""
            {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
             "metadata": {"name": "things", "uid": "controller-uid",
                          "annotations": {"metareactor.dev/delete-guard": "%s"}},
             "spec": {"generateSelector": true,
                      "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                      "childResources": [{"apiVersion": "v1", "resource": "configmaps",
                                          "updateStrategy": {"method": "InPlace"}}],
                      "hooks": {"sync": {"webhook": {"url": "%s"}}}}}"""
            .formatted(deleteGuard, hook.url("/sync")))), context);
    try {
      controller.start().subscribe();
      soon().until(() -> controller.phase() == HostedController.Phase.RUNNING);
      KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
          {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
           "metadata": {"name": "p", "namespace": "%s", "uid": "%s", "generation": 1, "resourceVersion": "7"},
           "spec": {}}""".formatted(NAMESPACE, PARENT_UID)));
      for (FuzzedAnswers.Observed observed : fuzzed.observed()) {
        KubeObjectBuilder child = KubeObjectBuilder.object(CONFIG_MAPS, NAMESPACE, observed.name())
            .label(ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID).controlledBy(parent)
            .field("data", "{\"value\": \"" + observed.value() + "\"}");
        if (observed.deleting()) {
          child.deleting();
        }
        informers.of(CONFIG_MAPS).put(child.build());
        api.holding(CONFIG_MAPS, child.build());
      }
      api.holding(THINGS, parent);
      informers.of(THINGS).put(parent).deliver(added(parent));
      soon().until(() -> syncs(meters, null) >= 1);
      // Whether the first sync failed; a valid answer's resync may start a second one meanwhile, never a failure.
      boolean refused = syncs(meters, "error") >= 1;
      List<RecordingApi.Action> writes = api.actions().stream()
          .filter(action -> !action.resource().equals("events")).toList();
      List<JsonNode> syncErrors = api.actions().stream()
          .filter(action -> action.resource().equals("events") && action.verb().equals("create"))
          .map(action -> KubeJson.mapper().readTree(action.body()))
          .filter(event -> event.path("reason").asString("").equals("SyncError")).toList();
      Verdict verdict = fuzzed.answer().verdict();
      if (verdict == Verdict.INVALID) {
        assertThat(refused).as("an invalid answer refused").isTrue();
      }
      if (verdict == Verdict.VALID && !deleteGuard
          && fuzzed.answer().shapes().stream().noneMatch(CHANGED_ON_THE_WIRE::contains)) {
        assertThat(refused).as("a valid answer refused: " + syncErrors).isFalse();
      }
      if (refused) {
        assertThat(syncErrors).as("the SyncError Events").isNotEmpty();
        JsonNode event = syncErrors.get(0);
        assertThat(event.path("type").asString()).isEqualTo("Warning");
        assertThat(event.at("/involvedObject/uid").asString()).as("on the parent").isEqualTo(PARENT_UID);
        String message = event.path("message").asString();
        assertThat(message).startsWith("Sync error: ");
        String reason = message.substring("Sync error: ".length());
        assertThat(reason).as("the reason").isNotBlank().hasSizeLessThanOrEqualTo(AnswerRules.MAX_MESSAGE);
        List<ILoggingEvent> logged;
        synchronized (lines) {
          logged = List.copyOf(lines.list);
        }
        assertThat(logged).as("the log lines").anySatisfy(line -> {
          assertThat(line.getLevel()).isEqualTo(Level.WARN);
          assertThat(line.getFormattedMessage())
              .isEqualTo("CompositeController things: sync of " + NAMESPACE + "/p failed: " + reason);
        });
        assertThat(writes).as("requests for a refused answer").isEmpty();
      } else {
        assertThat(syncErrors).as("SyncError Events of a sync that did not fail").isEmpty();
      }
      assertThat(controller.phase()).as("the controller after the sync").isEqualTo(HostedController.Phase.RUNNING);
      return refused;
    } finally {
      controller.stop(Duration.ZERO).block(Duration.ofSeconds(10));
    }
  }

  /** A wait of at most 10 s that looks every millisecond (awaitility's default, 100 ms, would be most of a case). */
  private static ConditionFactory soon() {
    return await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1));
  }

  /** The syncs that ended so far, of one result ({@code error}...) or of any ({@code null}). */
  private static double syncs(SimpleMeterRegistry meters, @Nullable String result) {
    return meters.find("controller_runtime.reconcile").counters().stream()
        .filter(counter -> result == null || result.equals(counter.getId().getTag("result")))
        .mapToDouble(Counter::count).sum();
  }
}
