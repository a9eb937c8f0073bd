package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.controller.composite.CompositeSyncFixture.CONFIG_MAPS;
import static dev.metareactor.engine.controller.composite.CompositeSyncFixture.NAMESPACE;
import static dev.metareactor.engine.controller.composite.CompositeSyncFixture.THINGS;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;

import dev.metareactor.engine.controller.ChildSelector;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.AnswerRules;
import dev.metareactor.engine.testing.FuzzCases;
import dev.metareactor.engine.testing.FuzzedAnswers;
import dev.metareactor.engine.testing.FuzzedAnswers.Case;
import dev.metareactor.engine.testing.FuzzedAnswers.ChildKind;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ObjectNode;

/**
 * A CompositeController's sync given generated answers ({@link FuzzedAnswers}) in the middle tier
 * ({@link CompositeSyncFixture}), under both apply strategies, with and without the delete guard and the shard's own
 * label: every one is converged by the rules or refused whole ({@link AnswerRules}). Beside the parent's children
 * there are three ConfigMaps answers may name: {@code foreign} (no owner), {@code theirs} (another parent's) and
 * {@code unseen} (no owner, not in the caches, as with {@code --sharding}).
 *
 * <p>1,000 cases per run, each a whole sync over a new fixture, from the fixed seed {@link FuzzCases#SEED}:
 * every run tries the same answers, and a failure names its case's seed to run it alone. More, or others, by hand:
 * {@code -Dmetareactor.fuzz.cases=100000}, {@code -Dmetareactor.fuzz.seed=<n>}.
 */
class CompositeFuzzedAnswersTest {

  private static final FuzzCases CASES = FuzzCases.of(1_000);
  private static final String PARENT_UID = "parent-uid";
  private static final FuzzedAnswers.Shape SHAPE = new FuzzedAnswers.Shape("children",
      new ChildKind("v1", "ConfigMap", "data"),
      List.of(new ChildKind("v1", "Secret", "data"), new ChildKind("v2", "ConfigMap", "data"),
          new ChildKind("apps/v1", "ConfigMap", "data"), new ChildKind("v1", "configmap", "data"),
          new ChildKind("test.metareactor.dev/v1", "Thing", "spec")),
      NAMESPACE, List.of(ChildSelector.CONTROLLER_UID_LABEL), List.of(), false, List.of("foreign", "theirs", "unseen"),
      new FuzzedAnswers.Owner(THINGS.apiVersion(), THINGS.kind(), "p", PARENT_UID));
  private static final FuzzedAnswers ANSWERS = new FuzzedAnswers(SHAPE);
  private static final Map<String, String> SHARD_LABEL = Map.of("shard.metareactor.dev/cc.things", "replica-0");

  @Test
  void everyAnswerIsConvergedByTheRulesOrRefusedWhole() {
    AnswerRules.run(CASES, ANSWERS, this::sync);
  }

  /** One sync of the parent {@code p} given {@code fuzzed}, with or without the guard and the shard's label. */
  private String sync(Case fuzzed, AnswerRules.Setup setup, SplittableRandom random) {
    Map<String, String> ownLabels = random.nextBoolean() ? SHARD_LABEL : Map.of();
    AnswerRules.FuzzedHook hook = new AnswerRules.FuzzedHook(fuzzed.answer());
    CompositeSyncFixture fixture = new CompositeSyncFixture(hook, setup.deleteGuard(), setup.strategy(), ownLabels);
    KubeObject parent = fixture.parent("p", PARENT_UID, "{}", "{}");
    fixture.api().holding(THINGS, parent);
    for (FuzzedAnswers.Observed child : fuzzed.observed()) {
      KubeObject created = fixture.childAsCreated(parent, configMap(child.name(), child.value()));
      if (child.deleting()) {
        created = KubeObjectBuilder.nextVersionOf(created).deleting().build();
        fixture.configMaps().put(created);
      }
      fixture.api().holding(CONFIG_MAPS, created);
    }
    KubeObject other = fixture.parent("other", "other-uid", "{}", "{}");
    fixture.api().holding(CONFIG_MAPS, fixture.childAsCreated(other, configMap("theirs", "theirs")));
    KubeObject foreign = object(CONFIG_MAPS, NAMESPACE, "foreign").field("data", "{\"value\": \"mine\"}").build();
    fixture.configMaps().put(foreign);
    fixture.api().holding(CONFIG_MAPS, foreign);
    fixture.api().holding(CONFIG_MAPS, object(CONFIG_MAPS, NAMESPACE, "unseen").build());
    AnswerRules rules = AnswerRules.before(fixture.api(), CONFIG_MAPS, THINGS, parent, Set.of("patch-status"),
        Map.of(ChildSelector.CONTROLLER_UID_LABEL, PARENT_UID), Map.of(), ownLabels, SHAPE.traps());

    AnswerRules.Outcome outcome = AnswerRules.Outcome.of(hook, () -> fixture.sync("p"));

    return rules.hold(fuzzed, setup.deleteGuard(), outcome, fixture.events());
  }

  private static ObjectNode configMap(String name, String value) {
    return (ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s", "namespace": "%s"},
         "data": {"value": "%s"}}""".formatted(name, NAMESPACE, value));
  }
}
