package dev.metareactor.engine.selector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SelectorIndexTest {

  private final SelectorIndex<String> index = new SelectorIndex<>();

  @Test
  void findsExactlyTheOwnersWhoseSelectorMatchesInTheirNamespace() {
    index.put("web", "a", LabelSelector.parse("app=web,tier=front"));
    index.put("db", "a", LabelSelector.parse("app=db"));
    index.put("web-in-b", "b", LabelSelector.parse("app=web"));
    index.put("anything-labelled", "a", LabelSelector.parse("team"));

    assertThat(index.matching("a", Map.of("app", "web", "tier", "front", "team", "x")))
        .containsExactlyInAnyOrder("web", "anything-labelled");
    assertThat(index.matching("a", Map.of("app", "web"))).as("tier missing").isEmpty();
    assertThat(index.matching("b", Map.of("app", "web", "tier", "front"))).containsExactly("web-in-b");
    assertThat(index.matching("c", Map.of("app", "web"))).isEmpty();
    assertThat(index.matching("a", null)).isEmpty();
  }

  @Test
  void clusterScopedOwnersMatchObjectsInEveryNamespace() {
    index.put("global", "", LabelSelector.parse("controller-uid=123"));
    assertThat(index.matching("a", Map.of("controller-uid", "123"))).containsExactly("global");
    assertThat(index.matching("", Map.of("controller-uid", "123"))).containsExactly("global");
    assertThat(index.matching("a", Map.of("controller-uid", "456"))).isEmpty();
  }

  @Test
  void setInFromApiFormAndSingleValueInAreLookedUpByLabel() {
    index.put("in", "a", LabelSelector.parse("env in (prod)"));
    index.put("not-in", "a", LabelSelector.parse("env notin (dev)"));
    assertThat(index.matching("a", Map.of("env", "prod"))).containsExactlyInAnyOrder("in", "not-in");
    assertThat(index.matching("a", Map.of("env", "dev"))).isEmpty();
  }

  @Test
  void reFilingAndRemovingReplaceTheOldSelector() {
    index.put("p", "a", LabelSelector.parse("app=one"));
    index.put("p", "a", LabelSelector.parse("app=two"));
    assertThat(index.matching("a", Map.of("app", "one"))).isEmpty();
    assertThat(index.matching("a", Map.of("app", "two"))).containsExactly("p");
    index.put("p", "b", LabelSelector.parse("app=two"));
    assertThat(index.matching("a", Map.of("app", "two"))).isEmpty();
    assertThat(index.matching("b", Map.of("app", "two"))).containsExactly("p");

    index.remove("p");
    assertThat(index.matching("b", Map.of("app", "two"))).isEmpty();
    assertThat(index.size()).isZero();
  }
}
