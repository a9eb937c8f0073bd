package dev.metareactor.engine.controller.decorator;

import static dev.metareactor.engine.controller.decorator.DecoratorSyncFixture.CONFIG_MAPS;
import static dev.metareactor.engine.controller.decorator.DecoratorSyncFixture.SERVICES;
import static dev.metareactor.engine.testing.KubeObjectBuilder.object;

import dev.metareactor.engine.controller.ObjectSync;
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

/**
 * A DecoratorController's sync given generated answers ({@link FuzzedAnswers}: attachments, and the target's own
 * labels and annotations) in the middle tier ({@link DecoratorSyncFixture}), attachments updated in place, under both
 * apply strategies, with and without the delete guard: every one is converged by the rules or refused whole
 * ({@link AnswerRules}). Beside the target's attachments there are three ConfigMaps answers may name: {@code foreign}
 * (no owner), {@code theirs} (the target's, but another DecoratorController's attachment) and {@code unseen} (no
 * owner, not in the caches).
 *
 * <p>1,000 cases per run, each a whole sync over a new fixture, from the fixed seed {@link FuzzCases#SEED}: every run
 * tries the same answers, and a failure names its case's seed to run it alone. More, or others, by hand:
 * {@code -Dmetareactor.fuzz.cases=100000}, {@code -Dmetareactor.fuzz.seed=<n>}.
 */
class DecoratorFuzzedAnswersTest {

  private static final FuzzCases CASES = FuzzCases.of(1_000);
  private static final String NAMESPACE = "team";
  private static final FuzzedAnswers.Shape SHAPE = new FuzzedAnswers.Shape("attachments",
      new ChildKind("v1", "ConfigMap", "data"),
      List.of(new ChildKind("v1", "Secret", "data"), new ChildKind("v2", "ConfigMap", "data"),
          new ChildKind("apps/v1", "ConfigMap", "data"), new ChildKind("v1", "Service", "spec")),
      NAMESPACE, List.of(), List.of(DecoratorSync.DECORATOR_ANNOTATION), true, List.of("foreign", "theirs", "unseen"),
      new FuzzedAnswers.Owner("v1", "Service", "web", "web-uid"));
  private static final FuzzedAnswers ANSWERS = new FuzzedAnswers(SHAPE);

  @Test
  void everyAnswerIsConvergedByTheRulesOrRefusedWhole() {
    AnswerRules.run(CASES, ANSWERS, this::sync);
  }

  /** One sync of the target {@code team/web} given {@code fuzzed}, with or without the guard. */
  private String sync(Case fuzzed, AnswerRules.Setup setup, SplittableRandom random) {
    DecoratorSyncFixture fixture = new DecoratorSyncFixture();
    KubeObject target = fixture.target();
    fixture.api.holding(SERVICES, target);
    for (FuzzedAnswers.Observed observed : fuzzed.observed()) {
      KubeObjectBuilder attachment = object(CONFIG_MAPS, NAMESPACE, observed.name())
          .annotation(DecoratorSync.DECORATOR_ANNOTATION, DecoratorSyncFixture.NAME).controlledBy(target)
          .field("data", "{\"value\": \"" + observed.value() + "\"}");
      if (observed.deleting()) {
        attachment.deleting();
      }
      fixture.configMaps.put(attachment.build());
      fixture.api.holding(CONFIG_MAPS, attachment.build());
    }
    trap(fixture, object(CONFIG_MAPS, NAMESPACE, "foreign").field("data", "{\"value\": \"mine\"}").build());
    trap(fixture, object(CONFIG_MAPS, NAMESPACE, "theirs").annotation(DecoratorSync.DECORATOR_ANNOTATION, "other")
        .controlledBy(target).build());
    fixture.api.holding(CONFIG_MAPS, object(CONFIG_MAPS, NAMESPACE, "unseen").build());
    AnswerRules rules = AnswerRules.before(fixture.api, CONFIG_MAPS, SERVICES, target, Set.of("patch", "patch-status"),
        Map.of(), Map.of(DecoratorSync.DECORATOR_ANNOTATION, DecoratorSyncFixture.NAME), Map.of(), SHAPE.traps());
    AnswerRules.FuzzedHook hook = new AnswerRules.FuzzedHook(fuzzed.answer());
    ObjectSync<TargetKey> sync = fixture.sync(hook, setup.deleteGuard(), false, setup.strategy(), "InPlace");

    AnswerRules.Outcome outcome = AnswerRules.Outcome.of(hook, () -> DecoratorSyncFixture.run(sync));

    return rules.hold(fuzzed, setup.deleteGuard(), outcome, fixture.events);
  }

  /** An object answers may name that the sync must leave as it is, cached and kept by the API. */
  private static void trap(DecoratorSyncFixture fixture, KubeObject object) {
    fixture.configMaps.put(object);
    fixture.api.holding(CONFIG_MAPS, object);
  }
}
