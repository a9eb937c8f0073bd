package dev.metareactor.engine.controller.map;

import static dev.metareactor.engine.controller.map.MapFixture.NAMESPACE;
import static dev.metareactor.engine.controller.map.MapFixture.cached;
import static dev.metareactor.engine.controller.map.MapFixture.input;
import static dev.metareactor.engine.controller.map.MapFixture.output;
import static dev.metareactor.engine.controller.map.MapFixture.parentSelecting;
import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.controller.ParentKey;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.JsonNode;

/**
 * {@link MapStatus} in the unit tier: its timers on a virtual clock, its counts from in-memory informer caches
 * ({@link MapFixture}, with the real {@link MapSync} counting selected inputs), its writes recorded. No cluster, no
 * waiting; milliseconds.
 */
class MapStatusTest {

  private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
  private final MapFixture fixture = new MapFixture();
  private final MapStatus status = fixture.status(scheduler, () -> scheduler.now(TimeUnit.NANOSECONDS));
  private final ParentKey key = new ParentKey(NAMESPACE, "p");
  /** The parent {@code p}, selecting {@code team=a}, with an empty status. */
  private final KubeObject parent = parentWithStatus("{}");

  @AfterEach
  void close() {
    status.close();
    scheduler.dispose();
  }

  /** Caches the parent {@code p} with this status and keeps it in the API, as the API server has it. */
  private KubeObject parentWithStatus(String json) {
    KubeObject cachedParent = cached(fixture.parents, parentSelecting(NAMESPACE, "p", "a").field("status", json)
        .build());
    fixture.api.holding(MapFixture.SCHEDULES, cachedParent);
    return cachedParent;
  }

  private List<RecordingApi.Action> statusWrites() {
    return fixture.api.actions().stream().filter(action -> action.verb().equals("patch-status")).toList();
  }

  /** Says the parent changed every {@code every} for {@code times} times, the clock moving on after each. */
  private void changes(int times, Duration every) {
    for (int i = 0; i < times; i++) {
      status.changed(key);
      scheduler.advanceTimeBy(every);
    }
  }

  @Test
  void aBurstOfChangesIsWrittenOnceAfterTheQuietPeriod() {
    Duration every = MapStatus.QUIET.dividedBy(3);
    changes(10, every);
    Duration quietSoFar = every;

    scheduler.advanceTimeBy(MapStatus.QUIET.minus(quietSoFar).minusMillis(1));
    assertThat(statusWrites()).as("before the parent was quiet for QUIET").isEmpty();

    scheduler.advanceTimeBy(Duration.ofMillis(1));
    assertThat(statusWrites()).extracting(RecordingApi.Action::toString)
        .containsExactly("patch-status schedules team/p");
    assertThat(statusWrites().get(0).body())
        .contains("{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":\"p-uid\"}")
        .contains("\"inputs\":{\"configmaps\":{\"total\":0},\"nodes\":{\"total\":0}}");

    scheduler.advanceTimeBy(MapStatus.AT_MOST.multipliedBy(2));
    assertThat(statusWrites()).hasSize(1);
  }

  @Test
  void aBurstLongerThanAtMostIsStillWrittenAtAtMost() {
    Duration every = MapStatus.QUIET.dividedBy(3);
    long writtenAt = -1;
    while (scheduler.now(TimeUnit.MILLISECONDS) < MapStatus.AT_MOST.toMillis() * 2) {
      changes(1, every);
      if (writtenAt < 0 && !statusWrites().isEmpty()) {
        writtenAt = scheduler.now(TimeUnit.MILLISECONDS);
      }
    }

    assertThat(writtenAt).isEqualTo(MapStatus.AT_MOST.toMillis());
    assertThat(statusWrites()).as("the status did not change after its first write").hasSize(1);
  }

  @Test
  void nothingIsCountedBeforeTheCachesHaveSyncedAndTheWholeCountIsWrittenOnceAfter() {
    AtomicBoolean synced = new AtomicBoolean();
    MapStatus listing = fixture.status(scheduler, () -> scheduler.now(TimeUnit.NANOSECONDS), synced::get);
    try {
      // The informers' first lists arriving: the parent changed, again and again, for longer than AT_MOST.
      for (int i = 0; i < 10; i++) {
        listing.changed(key);
        scheduler.advanceTimeBy(MapStatus.AT_MOST);
      }
      assertThat(statusWrites()).as("while the caches list").isEmpty();

      synced.set(true);
      scheduler.advanceTimeBy(MapStatus.QUIET);
      assertThat(statusWrites()).extracting(RecordingApi.Action::toString)
          .containsExactly("patch-status schedules team/p");
    } finally {
      listing.close();
    }
  }

  @Test
  void aStatusEqualToTheCachedOneIsNotWritten() {
    parentWithStatus(KubeJson.text(status.count(parent)));

    changes(1, MapStatus.AT_MOST);

    assertThat(statusWrites()).isEmpty();
  }

  @Test
  void aStatusEqualToTheOneLastWrittenIsNotWrittenAgainBeforeTheCacheShowsIt() {
    changes(1, MapStatus.AT_MOST);
    assertThat(statusWrites()).hasSize(1);

    changes(1, MapStatus.AT_MOST);

    assertThat(statusWrites()).hasSize(1);
  }

  @Test
  void aFailedWriteIsCountedAgainAfterTheQuietPeriod() {
    fixture.api.refusingNext("patch-status", 500, "InternalError");

    changes(1, MapStatus.AT_MOST);

    assertThat(statusWrites()).as("refused, then written").hasSize(2);
    assertThat(fixture.events).isEmpty();
  }

  @Test
  void writesThatKeepFailingAreTriedLessAndLessOftenAndOneThatSucceedsStartsAfresh() {
    List<Long> triedAt = new ArrayList<>();
    fixture.api.refusingNext("patch-status", 503, "ServiceUnavailable");
    status.changed(key);
    for (int step = 0; step < 2_000 && triedAt.size() < 6; step++) {
      scheduler.advanceTimeBy(Duration.ofMillis(50));
      if (statusWrites().size() > triedAt.size()) {
        triedAt.add(scheduler.now(TimeUnit.MILLISECONDS));
        if (triedAt.size() < 5) { // the API server down for the first five
          fixture.api.refusingNext("patch-status", 503, "ServiceUnavailable");
        }
      }
    }
    List<Long> gaps = new ArrayList<>();
    for (int i = 1; i < triedAt.size(); i++) {
      gaps.add(triedAt.get(i) - triedAt.get(i - 1));
    }
    assertThat(gaps).as("after 1, 2, 3, 4 and 5 failures in a row").containsExactly(300L, 600L, 1_200L, 2_400L,
        4_800L);
    assertThat(MapStatus.retryAfter(100)).isEqualTo(MapStatus.RETRY_AT_MOST);

    // Written at last: the next failure waits the quiet period only.
    fixture.api.refusingNext("patch-status", 503, "ServiceUnavailable");
    int before = statusWrites().size();
    cached(fixture.configMaps, input(NAMESPACE, "new", "a").build()); // a new count to write
    status.changed(key);
    scheduler.advanceTimeBy(MapStatus.QUIET);
    scheduler.advanceTimeBy(MapStatus.QUIET);
    assertThat(statusWrites()).as("refused once, then written %s after", MapStatus.QUIET).hasSize(before + 2);
  }

  @Test
  void aStatusTheApiServerRefusesIsReportedAndCountedAgainOnlyAtTheParentsNextChange() {
    fixture.api.refusingNext("patch-status", 422, "Invalid");

    changes(1, MapStatus.AT_MOST.multipliedBy(5));

    assertThat(statusWrites()).as("not written again before the parent changes").hasSize(1);
    assertThat(fixture.events)
        .containsExactly("p: Warning SyncError Sync error: can't update status: patch-status refused: 422 Invalid");

    changes(1, MapStatus.AT_MOST);
    assertThat(statusWrites()).hasSize(2);
  }

  @Test
  void countsInputsPerInputResourceAndOutputsPerOutputResourceWithTheirTrueConditionsInLowerCamelCase() {
    KubeObject first = cached(fixture.configMaps, input(NAMESPACE, "first", "a").build());
    cached(fixture.configMaps, input(NAMESPACE, "second", "a").build());
    cached(fixture.configMaps, input(NAMESPACE, "unselected", "b").build());
    cached(fixture.configMaps, input("elsewhere", "other-namespace", "a").build());
    cached(fixture.nodes, object(MapFixture.NODES, "", "node").label("team", "a").build());
    cached(fixture.outputs, withConditions(output(parent, first, "ready-and-under-pressure").build(),
        "{\"type\": \"Ready\", \"status\": \"True\"}, {\"type\": \"DiskPressure\", \"status\": \"True\"}"));
    cached(fixture.outputs, withConditions(output(parent, first, "ready").build(),
        "{\"type\": \"Ready\", \"status\": \"True\"}"));
    cached(fixture.outputs, withConditions(output(parent, first, "not-ready").build(),
        "{\"type\": \"Ready\", \"status\": \"False\"}, {\"type\": \"Progressing\", \"status\": \"Unknown\"}"));
    cached(fixture.outputs, object(MapFixture.OUTPUTS, NAMESPACE, "without-map-key").controlledBy(parent).build());
    KubeObject otherParent = parentSelecting(NAMESPACE, "other", "a").build();
    cached(fixture.outputs, withConditions(output(otherParent, first, "of-another-parent").build(),
        "{\"type\": \"Ready\", \"status\": \"True\"}"));

    JsonNode counted = KubeJson.mapper().readTree(KubeJson.text(status.count(parent)));

    assertThat(counted).isEqualTo(KubeJson.mapper().readTree("""
        {"observedGeneration": 1,
         "inputs": {"configmaps": {"total": 2}, "nodes": {"total": 1}},
         "outputs": {"outputs": {"total": 3, "diskPressure": 1, "ready": 2}}}"""));
  }

  /** {@code output} with these {@code status.conditions} (JSON objects, comma-separated). */
  private static KubeObject withConditions(KubeObject output, String conditions) {
    return nextVersionOf(output).field("status", "{\"conditions\": [" + conditions + "]}").build();
  }
}
