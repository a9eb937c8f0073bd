package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.deleted;
import static dev.metareactor.engine.testing.ObjectEvents.resync;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.informer.ObjectEvent;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.ForwardingObjectApi;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.engine.testing.RecordingApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/** {@link OwnWrites}: which informer events show a controller's own writes, and the causes they then give. */
class OwnWritesTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private final OwnWrites own = new OwnWrites();

  private static KubeObject child(String resourceVersion, String value) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "x", "namespace": "team", "uid": "x-uid", "resourceVersion": "%s",
                      "ownerReferences": [{"apiVersion": "v1", "kind": "Thing", "name": "a", "uid": "a-uid",
                                           "controller": true}]},
         "data": {"value": "%s"}}""".formatted(resourceVersion, value)));
  }

  private static ObjectApi.Written answer(KubeObject object) {
    return new ObjectApi.Written(KubeJson.bytes(object.toTree()));
  }

  @Test
  void anUpdateShowingTheVersionAWriteMadeIsAnEchoOnceAndAnyOtherVersionIsAChange() {
    KubeObject before = child("5", "old");
    KubeObject written = child("6", "new");
    own.wrote(answer(written));

    ObjectEvent echo = own.mark(updated(before, written));
    assertThat(echo.ownWrite()).isTrue();
    assertThat(echo.ownedTrigger(written).cause()).isEqualTo(Trigger.Cause.ECHO);
    assertThat(own.mark(updated(before, written)).ownWrite()).as("forgotten once it came back").isFalse();

    KubeObject someoneElses = child("7", "theirs");
    own.wrote(answer(written));
    ObjectEvent change = own.mark(updated(written, someoneElses));
    assertThat(change.ownWrite()).isFalse();
    assertThat(change.ownedTrigger(someoneElses).cause()).isEqualTo(Trigger.Cause.CHILD);
  }

  @Test
  void anEventOfAnOlderVersionIsAChangeAndTheWritesOwnEventStillComesBackAsItsEcho() {
    own.wrote(answer(child("9", "mine")));
    assertThat(own.mark(updated(child("7", "a"), child("8", "theirs"))).ownWrite()).isFalse();
    assertThat(own.mark(updated(child("8", "theirs"), child("9", "mine"))).ownWrite()).isTrue();
  }

  @Test
  void aSlowerAnswerOfAnEarlierWriteDoesNotReplaceALaterOne() {
    own.wrote(answer(child("9", "second")));
    own.wrote(answer(child("8", "first")));
    assertThat(own.mark(updated(child("8", "first"), child("9", "second"))).ownWrite()).isTrue();
  }

  @Test
  void bothWritesOfOneSyncToOneObjectComeBackAsEchoesWhicheverAnswerCameFirst() {
    // A DecoratorController's sync patches the target's labels (6), then its status (7); the labels' event comes
    // after the status write's answer.
    own.wrote(answer(child("6", "labelled")));
    own.wrote(answer(child("7", "status")));
    assertThat(own.mark(updated(child("5", "old"), child("6", "labelled"))).ownWrite()).isTrue();
    assertThat(own.mark(updated(child("6", "labelled"), child("7", "status"))).ownWrite()).isTrue();
    assertThat(own.mark(updated(child("6", "labelled"), child("7", "status"))).ownWrite())
        .as("forgotten once the last came back").isFalse();
  }

  @Test
  void aVersionBetweenTwoWritesIsSomeoneElsesChangeAndTheLaterWriteStillComesBack() {
    own.wrote(answer(child("6", "mine")));
    own.wrote(answer(child("8", "mine again")));
    assertThat(own.mark(updated(child("6", "mine"), child("7", "theirs"))).ownWrite()).isFalse();
    assertThat(own.mark(updated(child("5", "old"), child("6", "mine"))).ownWrite())
        .as("a version before the one shown will not come any more").isFalse();
    assertThat(own.mark(updated(child("7", "theirs"), child("8", "mine again"))).ownWrite()).isTrue();
  }

  @Test
  void ofOneObjectOnlyTheLastVersionsWrittenAreKept() {
    for (int version = 10; version < 10 + OwnWrites.Versions.MAX + 2; version++) {
      own.wrote(answer(child(String.valueOf(version), "v" + version)));
    }
    assertThat(own.mark(updated(child("9", "a"), child("11", "v11"))).ownWrite()).as("dropped").isFalse();
    assertThat(own.mark(updated(child("11", "v11"), child("12", "v12"))).ownWrite()).isTrue();
    assertThat(OwnWrites.Versions.of("3").with("1").with("2").with("2").versions()).containsExactly("1", "2", "3");
  }

  @Test
  void aParentsOwnStatusWriteComingBackIsAnEchoNotAStatusChange() {
    KubeObject parent = thing("3", 0);
    KubeObject written = thing("4", 3);
    assertThat(updated(parent, written).trigger().cause()).isEqualTo(Trigger.Cause.STATUS);
    own.wrote(answer(written));
    assertThat(own.mark(updated(parent, written)).trigger().cause()).isEqualTo(Trigger.Cause.ECHO);
  }

  @Test
  void aResyncADeletionAndAnObjectNeverWrittenAreNotEchoes() {
    KubeObject written = child("6", "new");
    own.wrote(answer(written));
    assertThat(own.mark(resync(written)).ownWrite()).as("the cache replayed: not the write coming back").isFalse();
    own.wrote(answer(written));
    assertThat(own.mark(deleted(written)).ownWrite()).isFalse();
    assertThat(own.mark(added(written)).ownWrite()).as("forgotten at its deletion").isFalse();
    assertThat(own.mark(updated(thing("1", 0), thing("2", 0))).ownWrite()).isFalse();
  }

  @Test
  void theRecordingApiRemembersEveryWriteButADryRun() {
    RecordingApi api = new RecordingApi();
    ObjectApi recording = own.recording(api);
    ObjectNode configMap = (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y", "namespace": "team"}}""");
    api.holding(CONFIG_MAPS, child("3", "held"));
    recording.apply(CONFIG_MAPS, child("3", "held").toTree(), "metareactor", true).block();
    assertThat(own.mark(updated(child("2", "a"), child("3", "held"))).ownWrite()).as("a dry run writes nothing")
        .isFalse();

    KubeObject created = recording.create(CONFIG_MAPS, configMap).block().object();
    assertThat(own.mark(added(created)).ownWrite()).isTrue();
  }

  @Test
  void anEventOfAnObjectWithAWriteInFlightWaitsForItsAnswerAndIsThenToldApart() {
    Sinks.One<ObjectApi.Written> answer = Sinks.one();
    ObjectApi api = own.recording(answering(answer));
    List<ObjectEvent> routed = new ArrayList<>();
    api.mergePatch(CONFIG_MAPS, "team", "x", KubeJson.nodes().objectNode()).subscribe();

    // The write's event comes before its answer, then someone else's change of another object.
    own.route(updated(child("5", "old"), child("6", "labelled")), routed::add);
    own.route(updated(other("3"), other("4")), routed::add);
    assertThat(routed).extracting(event -> event.object().name()).containsExactly("y");

    answer.tryEmitValue(answer(child("6", "labelled")));
    assertThat(routed).hasSize(2);
    assertThat(routed.get(1).ownWrite()).as("known for the echo once the answer told its version").isTrue();

    own.route(updated(child("6", "labelled"), child("7", "theirs")), routed::add);
    assertThat(routed).hasSize(3);
    assertThat(routed.get(2).ownWrite()).as("no write in flight: at once, a change").isFalse();
  }

  @Test
  void eventsHeldBackKeepTheirOrderAndAFailedWriteLetsThemGoAsChanges() {
    Sinks.One<ObjectApi.Written> first = Sinks.one();
    Sinks.One<ObjectApi.Written> second = Sinks.one();
    List<ObjectEvent> routed = new ArrayList<>();
    own.recording(answering(first)).mergePatch(CONFIG_MAPS, "team", "x", KubeJson.nodes().objectNode()).subscribe();
    own.recording(answering(second)).mergePatch(CONFIG_MAPS, "team", "x", KubeJson.nodes().objectNode())
        .subscribe(done -> { }, failed -> { });

    own.route(updated(child("5", "a"), child("6", "b")), routed::add);
    own.route(updated(child("6", "b"), child("7", "c")), routed::add);
    first.tryEmitValue(answer(child("6", "b")));
    assertThat(routed).as("another write to the object is still in flight").isEmpty();

    second.tryEmitError(new IllegalStateException("refused"));
    assertThat(routed).extracting(event -> event.object().resourceVersion()).containsExactly("6", "7");
    assertThat(routed).extracting(ObjectEvent::ownWrite).containsExactly(true, false);
  }

  @Test
  void aDeletionInFlightHoldsNothingBack() {
    Sinks.One<ObjectApi.Written> never = Sinks.one();
    ObjectApi api = own.recording(new ForwardingObjectApi(new RecordingApi()) {
      @Override
      public Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid) {
        return never.asMono().then();
      }
    });
    List<ObjectEvent> routed = new ArrayList<>();
    api.delete(CONFIG_MAPS, "team", "x", null).subscribe();
    own.route(updated(child("5", "a"), child("6", "b")), routed::add);
    assertThat(routed).hasSize(1);
  }

  /** An API whose patches are answered by {@code answer}. */
  private static ObjectApi answering(Sinks.One<ObjectApi.Written> answer) {
    return new ForwardingObjectApi(new RecordingApi()) {
      @Override
      public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type,
          JsonNode body) {
        return answer.asMono();
      }
    };
  }

  private static KubeObject other(String resourceVersion) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "y", "namespace": "team", "uid": "y-uid", "resourceVersion": "%s"}}"""
        .formatted(resourceVersion)));
  }

  private static KubeObject thing(String resourceVersion, int children) {
    return KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "a", "namespace": "team", "uid": "a-uid", "generation": 1,
                      "resourceVersion": "%s"},
         "spec": {}, "status": {"children": %d}}""".formatted(resourceVersion, children)));
  }
}
