package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.config.HotLoopSettings;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class HotLoopGuardTest {

  private static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  private static final ApiResource LIMIT_RANGES =
      new ApiResource("", "v1", "limitranges", "LimitRange", true, Set.of());
  private static final KubeObject PARENT = object(THINGS, "team", "p").uid("uid-p").build();
  private static final String KEY = "team/p";

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final List<String> events = new ArrayList<>();
  private final AtomicInteger counted = new AtomicInteger();
  private final HotLoopGuard guard = new HotLoopGuard(HotLoopSettings.DEFAULT,
      (object, type, reason, message) -> events.add(object.name() + ": " + type + " " + reason + " " + message),
      counted::incrementAndGet, now::get);

  /** A LimitRange as the API server keeps it: {@code cpu: 1}. */
  private static final KubeObject STORED = KubeObject.of((tools.jackson.databind.node.ObjectNode)
      KubeJson.mapper().readTree("""
          {"apiVersion": "v1", "kind": "LimitRange",
           "metadata": {"name": "limits", "namespace": "team", "uid": "lr", "resourceVersion": "12",
                        "labels": {"app": "p", "controller-uid": "uid-p"}},
           "spec": {"limits": [{"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}}]}}"""));

  /** The hook's LimitRange: {@code cpu: 1000m}, which the API server keeps as {@code 1}. */
  private static JsonNode desired(String cpu) {
    return KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "LimitRange",
         "metadata": {"name": "limits", "namespace": "team", "labels": {"app": "p"}},
         "spec": {"limits": [{"type": "Container", "max": {"cpu": "%s", "memory": "1Gi"}}]}}""".formatted(cpu));
  }

  private static HotLoopGuard.Write normalised() {
    return HotLoopGuard.Write.update(LIMIT_RANGES, STORED, desired("1000m"));
  }

  private Optional<HotLoopGuard.HotLoop> sync(HotLoopGuard.Write... writes) {
    now.addAndGet(Duration.ofMillis(200).toNanos());
    return guard.synced(KEY, PARENT, List.of(writes));
  }

  @Test
  void anUpdateNamesTheFieldsTheObjectDoesNotHaveAsWrittenAndNothingTheServerKeeps() {
    HotLoopGuard.Write write = normalised();
    assertThat(write.verb()).isEqualTo("update");
    assertThat(write.object()).isEqualTo("LimitRange team/limits");
    assertThat(write.fields()).containsExactly("spec.limits[0].max.cpu");

    assertThat(HotLoopGuard.Write.update(LIMIT_RANGES, STORED, desired("2")).fingerprint())
        .as("another value is another write").isNotEqualTo(write.fingerprint());
    assertThat(HotLoopGuard.Write.update(LIMIT_RANGES, STORED, desired("1000m")).fingerprint())
        .as("the same write again").isEqualTo(write.fingerprint());
    assertThat(HotLoopGuard.Write.create(LIMIT_RANGES, "team", "limits", desired("1000m")).fingerprint())
        .as("a create of it is another write").isNotEqualTo(write.fingerprint());
  }

  @Test
  void theSameWriteFiveTimesWithinAMinuteIsAHotLoopReportedOnceAndHeldBack() {
    for (int i = 1; i < 5; i++) {
      assertThat(sync(normalised())).as("write %d", i).isEmpty();
      assertThat(guard.held(KEY)).isEmpty();
    }
    Optional<HotLoopGuard.HotLoop> loop = sync(normalised());

    assertThat(loop).isPresent();
    assertThat(loop.get().times()).isEqualTo(5);
    assertThat(loop.get().hold()).isEqualTo(Duration.ofSeconds(5));
    assertThat(guard.held(KEY)).contains(Duration.ofSeconds(5));
    assertThat(events).singleElement().asString()
        .startsWith("p: Warning HotLoop the same update of LimitRange team/limits field spec.limits[0].max.cpu was"
            + " made 5 times within 60 s");
    assertThat(counted).hasValue(1);

    now.addAndGet(Duration.ofSeconds(2).toNanos());
    assertThat(guard.held(KEY)).contains(Duration.ofSeconds(3));
    now.addAndGet(Duration.ofSeconds(3).toNanos());
    assertThat(guard.held(KEY)).as("the hold is over").isEmpty();
  }

  @Test
  void theHoldDoublesWhileTheLoopGoesOnUpToTheLongestAndEndsWithASyncThatWritesNothing() {
    List<Duration> holds = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      sync(normalised()).ifPresent(loop -> holds.add(loop.hold()));
      guard.held(KEY).ifPresent(left -> now.addAndGet(left.toNanos()));
    }
    assertThat(holds).containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(20),
        Duration.ofSeconds(40), Duration.ofSeconds(80), Duration.ofSeconds(160), Duration.ofMinutes(5),
        Duration.ofMinutes(5));

    assertThat(sync()).as("a sync that writes nothing").isEmpty();
    for (int i = 1; i < 5; i++) {
      assertThat(sync(normalised())).as("counted from the start again: write %d", i).isEmpty();
    }
    assertThat(sync(normalised()).map(HotLoopGuard.HotLoop::hold)).as("and the first hold again")
        .contains(Duration.ofSeconds(5));
  }

  @Test
  void writesUndoingEachOtherAreAHotLoop() {
    HotLoopGuard.Write up = HotLoopGuard.Write.update(LIMIT_RANGES, STORED, desired("2"));
    HotLoopGuard.Write down = HotLoopGuard.Write.update(LIMIT_RANGES, STORED, desired("3"));
    int syncs = 0;
    Optional<HotLoopGuard.HotLoop> loop = Optional.empty();
    while (loop.isEmpty() && syncs < 20) {
      loop = sync(syncs++ % 2 == 0 ? up : down);
    }
    assertThat(syncs).as("the fifth write of the same value").isEqualTo(9);
    assertThat(loop.get().write().fields()).containsExactly("spec.limits[0].max.cpu");
  }

  @Test
  void progressIsNoHotLoop() {
    // A rolling update: each child written once per revision; a counter that moves; resyncs that write nothing.
    for (int revision = 0; revision < 20; revision++) {
      for (int child = 0; child < 3; child++) {
        KubeObject stored = object(LIMIT_RANGES, "team", "limits-" + child).build();
        assertThat(sync(HotLoopGuard.Write.update(LIMIT_RANGES, stored, desired(Integer.toString(revision)))))
            .isEmpty();
        assertThat(sync()).isEmpty();
      }
    }
    assertThat(events).isEmpty();
    assertThat(counted).hasValue(0);
    assertThat(guard.held(KEY)).isEmpty();
  }

  @Test
  void repeatsFurtherApartThanTheWindowAreNoHotLoop() {
    for (int i = 0; i < 10; i++) {
      now.addAndGet(Duration.ofSeconds(16).toNanos());
      assertThat(sync(normalised())).as("write %d", i).isEmpty();
    }
  }

  @Test
  void aChildDeletedAgainAndAgainIsAHotLoopNamingIt() {
    Optional<HotLoopGuard.HotLoop> loop = Optional.empty();
    for (int i = 0; i < 5; i++) {
      loop = sync(HotLoopGuard.Write.delete(LIMIT_RANGES, "team", "limits"));
    }
    assertThat(loop.map(found -> found.write().describe())).contains("delete of LimitRange team/limits");
  }

  @Test
  void aChangeOfTheParentLiftsTheHoldAndAGoneParentIsForgotten() {
    for (int i = 0; i < 5; i++) {
      sync(normalised());
    }
    assertThat(guard.held(KEY)).isPresent();
    guard.release(KEY);
    assertThat(guard.held(KEY)).isEmpty();
    for (int i = 1; i < 5; i++) {
      assertThat(sync(normalised())).as("counted from the start: write %d", i).isEmpty();
    }
    assertThat(sync(normalised())).isPresent();
    guard.forget(KEY);
    assertThat(guard.held(KEY)).isEmpty();
  }

  @Test
  void offItNeverFindsALoop() {
    HotLoopGuard off = HotLoopGuard.off();
    for (int i = 0; i < 20; i++) {
      assertThat(off.synced(KEY, PARENT, List.of(normalised()))).isEmpty();
    }
    assertThat(off.held(KEY)).isEmpty();
  }
}
