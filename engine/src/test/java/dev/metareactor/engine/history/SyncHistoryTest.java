package dev.metareactor.engine.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.queue.Trigger;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The ring of recent syncs: its per-parent N, its bound in bytes, and its pages. */
class SyncHistoryTest {

  private static final long T0 = Instant.parse("2026-11-27T12:01:03Z").toEpochMilli();

  static SyncEntry sync(long at, List<Trigger> causes, List<SyncEntry.Write> writes, String outcome, String error) {
    return new SyncEntry(at, causes, 0, 3_000, 1, 12_000, 345, writes, 0, outcome, error);
  }

  static SyncEntry quiet(long at) {
    return sync(at, List.of(Trigger.of(Trigger.Cause.RESYNC_PERIOD)), List.of(), "success", null);
  }

  private static ParentRef parent(int i) {
    return ParentRef.of("CompositeController", "things", "team", "parent-" + i);
  }

  @Test
  void aParentKeepsItsLastSyncsOnly() {
    SyncHistory history = new SyncHistory(4, 1 << 20);
    for (int i = 0; i < 10; i++) {
      history.add(parent(0), quiet(T0 + i));
    }
    SyncHistory.Syncs kept = history.parent(parent(0));
    assertThat(kept).isNotNull();
    assertThat(kept.syncs()).extracting(SyncEntry::startedAtMillis)
        .containsExactly(T0 + 6, T0 + 7, T0 + 8, T0 + 9);
    assertThat(kept.count()).isEqualTo(10);
    assertThat(history.entries()).isEqualTo(4);
  }

  /**
   * 10,000 parents synced 20 times each (one after the other), with the longest names Kubernetes allows and a full
   * load of causes and writes: the ring stays within its bytes (plus one parent's ring, the one just synced), keeps
   * the most recently synced parents and their last syncs, and its weight is what it holds, entry by entry.
   */
  @Test
  void tenThousandParentsStayWithinTheBound() {
    long maxBytes = 4L * 1024 * 1024;
    SyncHistory history = new SyncHistory(SyncHistory.DEFAULT_PER_PARENT, maxBytes);
    String longName = "n".repeat(253);
    List<Trigger> causes = List.of(Trigger.of(Trigger.Cause.SPEC),
        Trigger.about(Trigger.Cause.CHILD, Trigger.Change.UPDATED, "ConfigMap", "team", longName),
        Trigger.about(Trigger.Cause.RELATED, Trigger.Change.CREATED, "Secret", "team", longName),
        Trigger.of(Trigger.Cause.RESYNC_PERIOD));
    List<SyncEntry.Write> writes = IntStream.range(0, 8)
        .mapToObj(i -> new SyncEntry.Write("update", "ConfigMap", "team", longName + i, "2xx")).toList();
    String longError = "e".repeat(10_000);
    SyncEntry heaviest = sync(T0, causes, writes, "failed", longError);
    long parentWeight = SyncHistory.ownWeight(parent(99_999), SyncHistory.DEFAULT_PER_PARENT)
        + SyncHistory.DEFAULT_PER_PARENT * heaviest.bytes();
    long peak = 0;
    for (int i = 0; i < 10_000; i++) {
      for (int round = 0; round < 20; round++) {
        history.add(parent(i), sync(T0 + round, causes, writes, "failed", longError));
        peak = Math.max(peak, history.bytes());
      }
    }
    assertThat(heaviest.error()).as("an error is cut short").hasSize(SyncEntry.MAX_TEXT);
    assertThat(peak).as("the ring's weight at its heaviest").isLessThanOrEqualTo(maxBytes + parentWeight);
    int parents = history.size();
    assertThat(parents).as("parents kept").isLessThan(10_000).isGreaterThan(0);
    assertThat(history.entries()).isEqualTo(parents * SyncHistory.DEFAULT_PER_PARENT);
    assertThat(history.parent(parent(9_999))).as("the most recently synced parent").isNotNull();
    assertThat(history.parent(parent(0))).as("the least recently synced parent, forgotten").isNull();
    assertThat(history.forgotten()).isPositive();
    // The weight is the sum of what is held: nothing is counted twice or lost on eviction.
    long held = 0;
    for (SyncHistory.Syncs kept : history.parents("compositecontroller", "things")) {
      held += SyncHistory.weight(kept, SyncHistory.DEFAULT_PER_PARENT);
    }
    assertThat(history.bytes()).isEqualTo(held);
    System.out.printf("ring of recent syncs: %,d parents, %,d syncs, %,d bytes estimated (bound %,d)%n", parents,
        history.entries(), history.bytes(), maxBytes);
  }

  @Test
  void offKeepsNothing() {
    SyncHistory.OFF.add(parent(0), quiet(T0));
    assertThat(SyncHistory.OFF.size()).isZero();
    assertThat(new SyncPages(SyncHistory.OFF, Clock.systemUTC()).page(SyncPages.path(parent(0))).status())
        .isEqualTo(404);
  }

  @Test
  void aParentsPageListsItsSyncsAndAControllersPageItsBusiestAndFailingParents() {
    SyncHistory history = new SyncHistory(8, 1 << 20);
    for (int i = 0; i < 5; i++) {
      history.add(parent(1), quiet(T0 + i * 1000L));
    }
    history.add(parent(2), sync(T0, List.of(Trigger.of(Trigger.Cause.SPEC)), List.of(), "failed", "hook said no"));
    ParentRef cluster = ParentRef.of("MapController", "m", "", "input");
    history.add(cluster, quiet(T0));
    SyncPages pages = new SyncPages(history, Clock.fixed(Instant.ofEpochMilli(T0 + 5_000), ZoneOffset.UTC));

    SyncPages.Page one = pages.page("debug/syncs/compositecontroller/things/team/parent-2");
    assertThat(one.status()).isEqualTo(200);
    JsonNode page = KubeJson.mapper().readTree(one.json());
    assertThat(page.path("syncs").get(0).path("error").asString()).isEqualTo("hook said no");
    assertThat(page.path("syncs").get(0).path("causes").get(0).path("cause").asString()).isEqualTo("spec");

    assertThat(SyncPages.path(cluster)).isEqualTo("debug/syncs/mapcontroller/m/-/input");
    assertThat(pages.page(SyncPages.path(cluster)).status()).isEqualTo(200);

    JsonNode controller = KubeJson.mapper().readTree(pages.page("debug/syncs/compositecontroller/things").json());
    assertThat(controller.path("parents").asInt()).isEqualTo(2);
    assertThat(controller.path("busiest").get(0).path("name").asString()).isEqualTo("parent-1");
    assertThat(controller.path("busiest").get(0).path("syncsLastMinute").asInt()).isEqualTo(5);
    assertThat(controller.path("failing")).hasSize(1);
    assertThat(controller.path("failing").get(0).path("lastError").asString()).isEqualTo("hook said no");

    assertThat(pages.page("debug/syncs/compositecontroller/things/team/nobody").status()).isEqualTo(404);
    assertThat(pages.page("debug/syncs/widgetcontroller/things").status()).isEqualTo(404);
  }
}
