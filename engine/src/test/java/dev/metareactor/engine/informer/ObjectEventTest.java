package dev.metareactor.engine.informer;

import static dev.metareactor.engine.testing.KubeObjectBuilder.nextVersionOf;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static dev.metareactor.engine.testing.ObjectEvents.added;
import static dev.metareactor.engine.testing.ObjectEvents.resync;
import static dev.metareactor.engine.testing.ObjectEvents.updated;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link ObjectEvent#changedNothingButStatus}: what a child type's {@code ignoreStatusChanges} drops. */
class ObjectEventTest {

  private static final ApiResource WIDGETS =
      new ApiResource("test.metareactor.dev", "v1", "widgets", "Widget", true, Set.of("status"));
  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private final KubeObject widget = object(WIDGETS, "team", "w").field("spec", "{\"size\": 1}")
      .field("status", "{\"ready\": false}").build();

  @Test
  void anUpdateOfStatusAloneChangedNothingButStatus() {
    KubeObject after = nextVersionOf(widget).field("status", "{\"ready\": true}").build();

    assertThat(updated(widget, after).changedNothingButStatus()).isTrue();
  }

  @Test
  void aChangeOfTheDataOfAnObjectWithoutGenerationIsNotAStatusChange() {
    // A ConfigMap keeps no generation: upstream's parent test (generation, labels, annotations) calls this status.
    KubeObject map = object(CONFIG_MAPS, "team", "m").generation(0).field("data", "{\"a\": \"1\"}").build();
    KubeObject edited = nextVersionOf(map).field("data", "{\"a\": \"2\"}").build();

    assertThat(updated(map, edited).changedOnlyStatus()).isTrue();
    assertThat(updated(map, edited).changedNothingButStatus()).isFalse();
  }

  @Test
  void metadataChangesAreNotStatusChanges() {
    KubeObject owner = object(WIDGETS, "team", "owner").build();

    assertThat(updated(widget, nextVersionOf(widget).label("a", "b").build()).changedNothingButStatus()).isFalse();
    assertThat(updated(widget, nextVersionOf(widget).controlledBy(owner).build()).changedNothingButStatus())
        .isFalse();
    assertThat(updated(widget, nextVersionOf(widget).finalizer("x/y").build()).changedNothingButStatus()).isFalse();
    assertThat(updated(widget, nextVersionOf(widget).deleting().build()).changedNothingButStatus()).isFalse();
  }

  @Test
  void addsAndResyncsAreNotStatusChanges() {
    assertThat(added(widget).changedNothingButStatus()).isFalse();
    assertThat(resync(widget).changedNothingButStatus()).isFalse();
  }
}
