package dev.metareactor.engine.events;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.RecordingApi;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/** The event recorder's spam filter: a budget per object, and per part of an object when the event names one. */
class EventRecorderTest {

  private final RecordingApi api = new RecordingApi();
  /** Two events per object, then (at one every 300 s, and the clock standing still) none. */
  private final EventRecorder events = new EventRecorder(api, new RateLimit(1.0 / 300, 2),
      Clock.fixed(Instant.parse("2026-11-24T10:00:00Z"), ZoneOffset.UTC), "test");
  private final KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree(
      "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"p\", \"namespace\": \"ns\","
          + " \"uid\": \"u1\"}}"));

  @Test
  void anObjectOverItsBudgetGetsNoMoreEvents() {
    events.record(parent, EventRecorder.Type.Warning, "SyncError", "one");
    events.record(parent, EventRecorder.Type.Warning, "SyncError", "two");
    events.record(parent, EventRecorder.Type.Warning, "SyncError", "three");

    assertThat(created()).containsExactly("one", "two");
  }

  @Test
  void eachPartOfAnObjectHasABudgetOfItsOwn() {
    events.record(parent, "input a: ", EventRecorder.Type.Warning, "SyncError", "a1");
    events.record(parent, "input a: ", EventRecorder.Type.Warning, "SyncError", "a2");
    events.record(parent, "input a: ", EventRecorder.Type.Warning, "SyncError", "a3");
    events.record(parent, "input b: ", EventRecorder.Type.Warning, "SyncError", "b1");
    events.record(parent, EventRecorder.Type.Normal, "Synced", "whole");

    assertThat(created()).containsExactly("a1", "a2", "b1", "whole");
  }

  private List<String> created() {
    return api.actions().stream()
        .filter(action -> action.verb().equals("create") && action.resource().equals("events"))
        .map(action -> KubeJson.mapper().readTree(action.body()).path("message").asString())
        .toList();
  }
}
