package dev.metareactor.engine.controller.map;

import static dev.metareactor.engine.controller.map.MapFixture.NAMESPACE;
import static dev.metareactor.engine.controller.map.MapFixture.OUTPUTS;
import static dev.metareactor.engine.controller.map.MapFixture.SCHEDULES;
import static dev.metareactor.engine.controller.map.MapFixture.cached;
import static dev.metareactor.engine.controller.map.MapFixture.keyOf;
import static dev.metareactor.engine.controller.map.MapFixture.parentSelecting;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.AnswerRules;
import dev.metareactor.engine.testing.FuzzCases;
import dev.metareactor.engine.testing.FuzzedAnswers;
import dev.metareactor.engine.testing.FuzzedAnswers.Case;
import dev.metareactor.engine.testing.FuzzedAnswers.ChildKind;
import dev.metareactor.engine.testing.KubeObjectBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A MapController's sync of one input given generated map answers ({@link FuzzedAnswers}: outputs) in the middle tier
 * ({@link MapFixture}), under both apply strategies, with and without the delete guard: every one is converged by the
 * rules or refused whole ({@link AnswerRules}). Beside the input's outputs there are four Outputs answers may name:
 * {@code sibling} (the parent's, made from another input), {@code foreign} (no owner), {@code theirs} (another
 * parent's) and {@code unseen} (no owner, not in the caches).
 *
 * <p>1,000 cases per run, each a whole sync over a new fixture, from the fixed seed {@link FuzzCases#SEED}: every run
 * tries the same answers, and a failure names its case's seed to run it alone. More, or others, by hand:
 * {@code -Dmetareactor.fuzz.cases=100000}, {@code -Dmetareactor.fuzz.seed=<n>}.
 */
class MapFuzzedAnswersTest {

  private static final FuzzCases CASES = FuzzCases.of(1_000);
  private static final KubeObject PARENT = parentSelecting(NAMESPACE, "p", "a").build();
  private static final KubeObject INPUT = MapFixture.input(NAMESPACE, "in", "a").build();
  private static final FuzzedAnswers.Shape SHAPE = new FuzzedAnswers.Shape("outputs",
      new ChildKind(OUTPUTS.apiVersion(), OUTPUTS.kind(), "spec"),
      List.of(new ChildKind("v1", "ConfigMap", "data"), new ChildKind("test.metareactor.dev/v2", "Output", "spec"),
          new ChildKind(SCHEDULES.apiVersion(), SCHEDULES.kind(), "spec"),
          new ChildKind("other.dev/v1", "Output", "spec")),
      NAMESPACE, List.of(MapSync.MAP_KEY_LABEL), List.of(MapSync.INPUT_ANNOTATION), false,
      List.of("sibling", "foreign", "theirs", "unseen"),
      new FuzzedAnswers.Owner(SCHEDULES.apiVersion(), SCHEDULES.kind(), PARENT.name(), PARENT.uid()));
  private static final FuzzedAnswers ANSWERS = new FuzzedAnswers(SHAPE);

  @Test
  void everyAnswerIsConvergedByTheRulesOrRefusedWhole() {
    AnswerRules.run(CASES, ANSWERS, this::sync);
  }

  /** One sync of the parent {@code p}'s input {@code in} given {@code fuzzed}, with or without the guard. */
  private String sync(Case fuzzed, AnswerRules.Setup setup, SplittableRandom random) {
    MapFixture fixture = new MapFixture(null, setup.deleteGuard(), setup.strategy());
    cached(fixture.parents, PARENT);
    cached(fixture.configMaps, INPUT);
    for (FuzzedAnswers.Observed observed : fuzzed.observed()) {
      KubeObjectBuilder output = MapFixture.output(PARENT, INPUT, observed.name())
          .field("spec", "{\"value\": \"" + observed.value() + "\"}");
      if (observed.deleting()) {
        output.deleting();
      }
      kept(fixture, output.build());
    }
    kept(fixture, MapFixture.output(PARENT, MapFixture.input(NAMESPACE, "other-in", "a").build(), "sibling").build());
    kept(fixture, object(OUTPUTS, NAMESPACE, "foreign").field("spec", "{\"value\": \"mine\"}").build());
    KubeObject other = parentSelecting(NAMESPACE, "other", "a").build();
    kept(fixture, MapFixture.output(other, INPUT, "theirs").build());
    fixture.api.holding(OUTPUTS, object(OUTPUTS, NAMESPACE, "unseen").build());
    AnswerRules rules = AnswerRules.before(fixture.api, OUTPUTS, SCHEDULES, PARENT, Set.of(),
        Map.of(MapSync.MAP_KEY_LABEL, INPUT.uid()), Map.of(MapSync.INPUT_ANNOTATION, "configmaps/team/in"), Map.of(),
        SHAPE.traps());
    AnswerRules.FuzzedHook hook = new AnswerRules.FuzzedHook(fuzzed.answer());

    AnswerRules.Outcome outcome = AnswerRules.Outcome.of(hook,
        () -> fixture.objectSync(hook).sync(keyOf(PARENT, INPUT)).block(Duration.ofSeconds(5)));

    return rules.hold(fuzzed, setup.deleteGuard(), outcome, fixture.events);
  }

  /** Caches {@code output} and keeps it in the API. */
  private static void kept(MapFixture fixture, KubeObject output) {
    fixture.outputs.put(output);
    fixture.api.holding(OUTPUTS, output);
  }
}
