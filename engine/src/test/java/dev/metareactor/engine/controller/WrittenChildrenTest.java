package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.KubeObjectBuilder.object;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.api.UpdateMethod;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformerLease;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class WrittenChildrenTest {

  private static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
  private static final ApiResource SECRETS = new ApiResource("", "v1", "secrets", "Secret", true, Set.of());
  private static final ChildType MAPS = new ChildType(CONFIG_MAPS, new FakeInformerLease(CONFIG_MAPS),
      UpdateMethod.IN_PLACE);
  private static final ChildType KEYS = new ChildType(SECRETS, new FakeInformerLease(SECRETS), UpdateMethod.IN_PLACE);

  private final WrittenChildren written = new WrittenChildren();

  @Test
  void aCreateTheCacheDoesNotShowYetIsObservedUntilItDoes() {
    KubeObject created = object(CONFIG_MAPS, "ns", "p-a").build();
    written.recorder("ns/p", "uid-p").created(CONFIG_MAPS, created);

    Map<ChildType, List<KubeObject>> before = written.observedWith("ns/p", "uid-p", Map.of(MAPS, List.of(),
        KEYS, List.of()));
    assertThat(before.get(MAPS)).containsExactly(created);
    assertThat(before.get(KEYS)).isEmpty();

    KubeObject cached = object(CONFIG_MAPS, "ns", "p-a").resourceVersion("2").build();
    assertThat(written.observedWith("ns/p", "uid-p", Map.of(MAPS, List.of(cached))).get(MAPS))
        .as("the cache's copy, once it has one").containsExactly(cached);
    assertThat(written.observedWith("ns/p", "uid-p", Map.of(MAPS, List.of())).get(MAPS))
        .as("forgotten once the cache showed it").isEmpty();
  }

  @Test
  void anotherKeyOrANamesakeParentSeesNothingOfIt() {
    written.recorder("ns/p", "uid-p").created(CONFIG_MAPS, object(CONFIG_MAPS, "ns", "p-a").build());
    assertThat(written.observedWith("ns/q", "uid-q", Map.of(MAPS, List.of())).get(MAPS)).isEmpty();
    assertThat(written.observedWith("ns/p", "uid-new", Map.of(MAPS, List.of())).get(MAPS)).isEmpty();
  }

  @Test
  void aCreateTheCacheCaughtUpWithButDoesNotShowWasDeletedSinceAndIsForgotten() {
    FakeInformerLease informer = new FakeInformerLease(CONFIG_MAPS);
    ChildType maps = new ChildType(CONFIG_MAPS, informer, UpdateMethod.IN_PLACE);
    KubeObject created = object(CONFIG_MAPS, "ns", "p-a").resourceVersion("10").build();
    written.recorder("ns/p", "uid-p").created(CONFIG_MAPS, created);

    informer.caughtUpTo("9");
    assertThat(written.observedWith("ns/p", "uid-p", Map.of(maps, List.of())).get(maps))
        .as("the cache is behind the create").containsExactly(created);
    informer.caughtUpTo("12");
    assertThat(written.observedWith("ns/p", "uid-p", Map.of(maps, List.of())).get(maps))
        .as("the cache saw the create and then its delete (the next sync creates it again)").isEmpty();
    informer.caughtUpTo("9");
    assertThat(written.observedWith("ns/p", "uid-p", Map.of(maps, List.of())).get(maps)).as("forgotten").isEmpty();
  }
}
