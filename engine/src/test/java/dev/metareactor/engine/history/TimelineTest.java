package dev.metareactor.engine.history;

import static dev.metareactor.engine.history.SyncHistoryTest.quiet;
import static dev.metareactor.engine.history.SyncHistoryTest.sync;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.queue.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** {@code metareactor why}'s timeline and what it flags, from the ring's own pages. */
class TimelineTest {

  private static final long T0 = Instant.parse("2026-11-27T12:01:03.120Z").toEpochMilli();
  private static final Timeline TIMELINE = new Timeline(ZoneOffset.UTC, 10, Duration.ofSeconds(1));
  private static final ParentRef PARENT = ParentRef.of("CompositeController", "things", "default", "x");

  private static JsonNode page(List<SyncEntry> syncs) {
    SyncHistory history = new SyncHistory(16, 1 << 20);
    syncs.forEach(sync -> history.add(PARENT, sync));
    return SyncPages.parent(history.parent(PARENT));
  }

  @Test
  void aSyncIsOneReadableLine() {
    JsonNode page = page(List.of(sync(T0,
        List.of(Trigger.about(Trigger.Cause.RELATED, Trigger.Change.UPDATED, "ConfigMap", "default", "x")),
        List.of(new SyncEntry.Write("update", "ConfigMap", "default", "x-0", "2xx"),
            new SyncEntry.Write("create", "Secret", "default", "x-1", "409")), "success", null)));
    assertThat(TIMELINE.render(page)).isEqualTo("""
        compositecontroller/things default/x: 1 syncs seen, 0 failed; the last 1:
        12:01:03.120 synced because ConfigMap default/x updated (related); waited 3.0 ms, hook 12 ms, answer 345 B, \
        wrote ConfigMap default/x-0 (update), Secret default/x-1 (create, 409)
        """);
    assertThat(TIMELINE.findings(page)).isEmpty();
  }

  @Test
  void aFailedSyncSaysWhy() {
    JsonNode page = page(List.of(sync(T0, List.of(Trigger.of(Trigger.Cause.RETRY_FAILED)), List.of(), "failed",
        "hook answered 500")));
    assertThat(TIMELINE.line(page.path("syncs").get(0))).isEqualTo("12:01:03.120 synced because retry after an "
        + "error; waited 3.0 ms, hook 12 ms, answer 345 B, wrote nothing; failed: hook answered 500");
  }

  @Test
  void runsToldToComeBackLaterKeepTheirReasonButAreNoFailures() {
    List<SyncEntry> syncs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      syncs.add(sync(T0 + i * 1000L, List.of(Trigger.of(Trigger.Cause.SHARD_MOVE)), List.of(), "retry after 1000 ms",
          "the cache of configmaps/v1 is at resourceVersion 5738, the objects that moved with it at 5844"));
    }
    JsonNode page = page(syncs);
    assertThat(page.path("failures").asLong()).isZero();
    assertThat(TIMELINE.render(page)).startsWith("compositecontroller/things default/x: 4 syncs seen, 0 failed")
        .contains("synced because moved to this shard; waited 3.0 ms, hook 12 ms, answer 345 B, wrote nothing; "
            + "retry after 1000 ms: the cache of configmaps/v1");
    assertThat(TIMELINE.findings(page)).isEmpty();
  }

  @Test
  void manySyncsAMinuteThatWriteNothingAreAHotLoop() {
    List<SyncEntry> syncs = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      syncs.add(quiet(T0 + i * 500L)); // two a second
    }
    assertThat(TIMELINE.findings(page(syncs))).singleElement().asString()
        .startsWith("hot loop: the last 12 syncs wrote nothing, 12 within 5.5 s (about 120 a minute, more than 10)")
        .endsWith("most often because resync period");
  }

  @Test
  void theFewSyncsThatSettleAChangeAreNoHotLoop() {
    List<SyncEntry> syncs = new ArrayList<>();
    syncs.add(sync(T0, List.of(Trigger.of(Trigger.Cause.SPEC)),
        List.of(new SyncEntry.Write("update", "ConfigMap", "default", "x-0", "2xx")), "success", null));
    for (int i = 1; i <= 6; i++) {
      syncs.add(quiet(T0 + i * 50L)); // its writes coming back, and a resync meanwhile
    }
    assertThat(TIMELINE.findings(page(syncs))).isEmpty();
  }

  @Test
  void syncsThatWriteNothingNowAndThenAreNoHotLoop() {
    List<SyncEntry> syncs = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      syncs.add(quiet(T0 + i * 30_000L)); // two a minute
    }
    assertThat(TIMELINE.findings(page(syncs))).isEmpty();
  }

  @Test
  void repeatedFailuresAndLongWaitsAreFlagged() {
    List<SyncEntry> syncs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      syncs.add(new SyncEntry(T0 + i * 10_000L, List.of(Trigger.of(Trigger.Cause.RETRY_FAILED)), 0, 2_500_000, 1,
          1_000, 0, List.of(new SyncEntry.Write("update", "ConfigMap", "default", "x", "500")), 0, "failed",
          "update ConfigMap default/x: 500"));
    }
    assertThat(TIMELINE.findings(page(syncs))).containsExactly(
        "failing: the last 3 syncs failed, the last with: update ConfigMap default/x: 500",
        "long queue waits: 3 of the last 3 syncs waited 1000 ms or more in the queue, the longest 2500 ms (the "
            + "controller's workers were busy: see --workers and the queue depth metrics)");
  }
}
