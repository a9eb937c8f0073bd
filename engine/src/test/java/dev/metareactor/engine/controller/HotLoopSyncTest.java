package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.config.HotLoopSettings;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.controller.composite.CompositeSyncFixture;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.queue.Causes;
import dev.metareactor.engine.queue.Outcome;
import dev.metareactor.engine.queue.Trigger;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.node.ObjectNode;

/**
 * Whole syncs of a CompositeController run as the work queue runs them ({@link SyncRunner} over the middle tier's
 * {@link CompositeSyncFixture}), with the {@link HotLoopGuard} on its defaults: a child whose write never sticks (the
 * cache keeps showing the value as the API server normalised it, and each write's echo brings the parent back) is a
 * hot loop after five syncs, and the parent's next syncs are held back without a hook call; progress and syncs that
 * write nothing never are.
 */
class HotLoopSyncTest {

  private static final ParentKey KEY = new ParentKey(CompositeSyncFixture.NAMESPACE, "p");
  /** What the queue hands a run after the echo of the child's update. */
  private static final Causes CHILD_CHANGED = new Causes(List.of(Trigger.about(Trigger.Cause.CHILD,
      Trigger.Change.UPDATED, "ConfigMap", CompositeSyncFixture.NAMESPACE, "p-limits")), 0);
  private static final Causes SPEC_CHANGED = new Causes(List.of(Trigger.of(Trigger.Cause.SPEC)), 0);

  private final AtomicInteger calls = new AtomicInteger();
  /** The child's {@code data.value} the hook answers. */
  private final AtomicReference<String> wanted = new AtomicReference<>("1000m");
  private final CompositeSyncFixture fixture = new CompositeSyncFixture((request, root) -> {
    calls.incrementAndGet();
    return Mono.just(KubeJson.mapper().readTree("""
        {"children": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-limits"},
                       "data": {"value": "%s"}}]}""".formatted(wanted.get())));
  }, HotLoopSettings.DEFAULT);
  private final SyncRunner<ParentKey> runner = new SyncRunner<>(LoggerFactory.getLogger(HotLoopSyncTest.class),
      "CompositeController", "things", fixture.objectSync(), new SyncMetrics(new SimpleMeterRegistry(), "things", 1),
      WriteFence.OPEN, new EventRecorder(fixture.api(), new RateLimit(1, 10), Clock.systemUTC(), "test"));

  /** The parent and its child as the API server keeps it: {@code data.value} {@code stored}. */
  private void childStoredAs(String stored) {
    KubeObject parent = fixture.parent("p", "uid-p", "{}", "{}");
    fixture.childAsCreated(parent, (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-limits", "namespace": "team"},
         "data": {"value": "%s"}}""".formatted(stored)));
  }

  private List<Outcome> runs(int count, Causes causes) {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      outcomes.add(runner.run(KEY, causes).block(Duration.ofSeconds(5)));
    }
    return outcomes;
  }

  private long updates() {
    return fixture.api().actions().stream().filter(action -> action.verb().equals("update")).count();
  }

  @Test
  void aWriteThatNeverSticksIsAHotLoopAndTheParentIsHeldBackWithoutHookCalls() {
    childStoredAs("1");

    List<Outcome> outcomes = runs(20, CHILD_CHANGED);

    assertThat(calls).as("hook calls: five syncs, then held").hasValue(5);
    assertThat(updates()).as("the same update five times").isEqualTo(5);
    assertThat(outcomes.subList(0, 5)).containsOnly(Outcome.success());
    assertThat(outcomes.subList(5, 20)).allSatisfy(outcome -> {
      assertThat(outcome.kind()).isEqualTo(Outcome.Kind.RETRY_AFTER);
      assertThat(outcome.after()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(5));
    });
    assertThat(fixture.events()).singleElement().asString()
        .startsWith("p: Warning HotLoop the same update of ConfigMap team/p-limits field data.value was made 5"
            + " times within 60 s");
    assertThat(fixture.hotLoops()).isEqualTo(1);

    // The parent's own change lifts the hold: the hook is asked again at once.
    runs(1, SPEC_CHANGED);
    assertThat(calls).hasValue(6);
  }

  @Test
  void progressAndSyncsThatWriteNothingAreNoHotLoop() {
    childStoredAs("1000m");
    runs(20, CHILD_CHANGED);
    assertThat(updates()).as("converged: nothing to write").isZero();

    for (int i = 0; i < 20; i++) {
      // Each sync writes a value not written before, as a counter or a rolling update does.
      wanted.set("v" + i);
      runs(1, CHILD_CHANGED);
    }
    assertThat(updates()).isEqualTo(20);
    assertThat(calls).hasValue(40);
    assertThat(fixture.events()).isEmpty();
    assertThat(fixture.hotLoops()).isZero();
  }
}
