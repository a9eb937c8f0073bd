package dev.metareactor.engine.testing;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.metareactor.engine.config.ApplyStrategy;
import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FuzzedAnswers.Answer;
import dev.metareactor.engine.testing.FuzzedAnswers.Case;
import dev.metareactor.engine.testing.FuzzedAnswers.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The rules a sync holds every hook answer to, checked on what one sync of a {@link FuzzedAnswers} case did in the
 * middle tier (the requests {@link RecordingApi} recorded, the Events, how the sync ended), whatever the kind of
 * controller:
 *
 * <ul>
 *   <li>nothing escapes the sync but a {@link HookResponseException} (an answer refused: a {@code SyncError});</li>
 *   <li>a refused answer makes no request at all and records no Event, and its message says why in at most 1,024
 *       characters (however long the answer's strings); an answer built invalid is refused, a valid one is refused
 *       only by the delete guard's rules;</li>
 *   <li>bounded work: one hook call, a sync that ends (within the fixture's five-second wait), no request made twice,
 *       at most three per child name plus two about the parent;</li>
 *   <li>a child is deleted only when an accepted answer leaves it out, or has no children field at all (without
 *       the guard); under {@code metareactor.dev/delete-guard} never more than half of the live ones (when more than
 *       one) and never by an answer without the field; only observed, live children are deleted, each once;</li>
 *   <li>every request is about the parent itself (the kind's own writes) or a child of the declared type: a create
 *       of a name asked for and not observed, an update of an observed live child asked for; objects of asked-for
 *       names that are not the parent's (traps) are left exactly as they were;</li>
 *   <li>every name and namespace in a request is one the API server takes (Kubernetes' own patterns);</li>
 *   <li>every child written is controlled by the parent and nothing else, carries the engine's own labels and
 *       annotations with the engine's values and no {@code shard.metareactor.dev/} key but the applier's;</li>
 *   <li>the hook's Events are recorded, a {@code MissingChildren} Warning exactly when an answer without the field
 *       deletes children, and the resync delay is the answer's, never under 100 ms.</li>
 * </ul>
 *
 * @param api where the sync's requests went
 * @param children the declared child resource
 * @param parents the synced object's resource
 * @param namespace the synced object's namespace
 * @param parentName the synced object's name
 * @param parentUid the synced object's UID
 * @param parentVerbs the requests the kind may make about the synced object ({@code patch-status}...)
 * @param engineLabels the labels every written child carries with the engine's value
 * @param engineAnnotations the annotations every written child carries with the engine's value
 * @param ownLabels the applier's own labels ({@code --sharding}'s)
 * @param traps the objects of names answers ask for that are not the parent's, as kept before the sync
 */
public record AnswerRules(RecordingApi api, ApiResource children, ApiResource parents, String namespace,
    String parentName, String parentUid, Set<String> parentVerbs, Map<String, String> engineLabels,
    Map<String, String> engineAnnotations, Map<String, String> ownLabels, Map<String, ObjectNode> traps) {

  private static final Set<String> CHILD_WRITES = Set.of("create", "apply-create", "update", "apply");
  private static final Set<String> CREATES = Set.of("create", "apply-create");
  private static final Duration MIN_RESYNC = Duration.ofMillis(100);
  /** The longest message a refusal may have, in characters (as Kubernetes keeps an Event's note). */
  public static final int MAX_MESSAGE = 1024;

  /** How a sync ended ({@link #hold}): the answer refused whole. */
  private static final String REFUSED = "refused";
  /** An answer that is not invalid, refused by {@code metareactor.dev/delete-guard}'s rules. */
  private static final String REFUSED_BY_THE_GUARD = "refused by the delete guard";
  /** Converged to the answer without deleting anything. */
  private static final String CONVERGED = "converged";
  /** Converged to the answer, deleting what it left out. */
  private static final String CONVERGED_DELETING = "converged, deleting";

  public AnswerRules {
    parentVerbs = Set.copyOf(parentVerbs);
    engineLabels = Map.copyOf(engineLabels);
    engineAnnotations = Map.copyOf(engineAnnotations);
    ownLabels = Map.copyOf(ownLabels);
    traps = Map.copyOf(traps);
  }

  /**
   * The rules for one sync, the traps read from {@code api} as they are now (before the sync).
   *
   * @param trapNames the names of objects of {@code children} that are there and not the parent's
   */
  public static AnswerRules before(RecordingApi api, ApiResource children, ApiResource parents, KubeObject parent,
      Set<String> parentVerbs, Map<String, String> engineLabels, Map<String, String> engineAnnotations,
      Map<String, String> ownLabels, List<String> trapNames) {
    Map<String, ObjectNode> traps = new LinkedHashMap<>();
    for (String name : trapNames) {
      traps.put(name, api.object(children, parent.namespace(), name).orElseThrow().toTree());
    }
    return new AnswerRules(api, children, parents, parent.namespace(), parent.name(), parent.storedUid(),
        parentVerbs, engineLabels, engineAnnotations, ownLabels, traps);
  }

  /** A sync hook answering every call with a copy of one generated answer, counting the calls. */
  public static final class FuzzedHook implements HookCaller {
    private final JsonNode answer;
    private final AtomicInteger calls = new AtomicInteger();

    public FuzzedHook(Answer answer) {
      this.answer = answer.body();
    }

    @Override
    public Mono<JsonNode> call(JsonNode request, RootObject root) {
      return Mono.fromSupplier(() -> {
        calls.incrementAndGet();
        return answer.deepCopy();
      });
    }

    /** How many times the hook was called. */
    public int calls() {
      return calls.get();
    }
  }

  /**
   * How one sync ended: its resync delay, or what escaped it (thrown, or dropped by Reactor on the way), and how many
   * times it called the hook.
   *
   * @param failure what escaped, {@code null} when the sync completed
   */
  public record Outcome(@Nullable Throwable failure, Optional<Duration> resync, int hookCalls) {

    /**
     * Runs {@code sync}, catching whatever it throws and whatever Reactor drops meanwhile. A sync that does not end
     * within the fixture's wait (five seconds) fails with the wait's exception, so unbounded work is a finding too.
     */
    public static Outcome of(FuzzedHook hook, Supplier<Optional<Duration>> sync) {
      List<Throwable> dropped = new CopyOnWriteArrayList<>();
      Hooks.onErrorDropped(dropped::add);
      try {
        Optional<Duration> resync = sync.get();
        return dropped.isEmpty() ? new Outcome(null, resync, hook.calls())
            : new Outcome(dropped.get(0), Optional.empty(), hook.calls());
      } catch (Throwable e) { // a StackOverflowError or an assertion inside the engine is as much a finding
        return new Outcome(e, Optional.empty(), hook.calls());
      } finally {
        Hooks.resetOnErrorDropped();
      }
    }
  }

  /**
   * Holds the rules on one sync of {@code fuzzed}.
   *
   * @return how it ended: {@code refused}, {@code refused by the delete guard}, {@code converged} or
   *     {@code converged, deleting}
   */
  public String hold(Case fuzzed, boolean deleteGuard, Outcome outcome, List<String> events) {
    try {
      return check(fuzzed, deleteGuard, outcome, events);
    } catch (AssertionError e) {
      Throwable failure = outcome.failure();
      throw new AssertionError(e.getMessage() + "\nthe sync " + (failure == null ? "completed" : "failed: " + failure)
          + (deleteGuard ? ", under the delete guard" : "") + "; requests " + api.actions() + "; Events " + events
          + "\nthe case: " + fuzzed, e);
    }
  }

  private String check(Case fuzzed, boolean deleteGuard, Outcome outcome, List<String> events) {
    Answer answer = fuzzed.answer();
    List<RecordingApi.Action> actions = api.actions();
    assertThat(outcome.hookCalls()).as("hook calls of one sync").isEqualTo(1);
    namesTheApiServerTakes(actions);
    Set<String> live = fuzzed.live();
    Set<String> deletable = new LinkedHashSet<>(live);
    if (answer.childrenGiven()) {
      deletable.removeAll(answer.desired());
    }
    boolean guardRefuses = deleteGuard && (!answer.childrenGiven() && !deletable.isEmpty()
        || deletable.size() > 1 && deletable.size() * 2 > live.size());
    Throwable failure = outcome.failure();
    if (failure != null) {
      assertThat(failure).as("the only failure a hook's answer may cause").isInstanceOf(HookResponseException.class);
      clearMessage(failure.getMessage());
      assertThat(actions).as("requests made for a refused answer").isEmpty();
      assertThat(events).as("Events recorded for a refused answer").isEmpty();
      if (answer.verdict() == Verdict.VALID) {
        assertThat(guardRefuses).as("a valid answer refused (" + failure.getMessage() + ") other than by the delete"
            + " guard").isTrue();
      }
      return guardRefuses && answer.verdict() != Verdict.INVALID ? REFUSED_BY_THE_GUARD : REFUSED;
    }
    assertThat(answer.verdict()).as("an invalid answer accepted").isNotEqualTo(Verdict.INVALID);
    assertThat(guardRefuses).as("an answer the delete guard refuses accepted").isFalse();
    boundedRequests(fuzzed, actions);
    childRequests(fuzzed, actions, deletable);
    parentRequests(actions);
    trapsUntouched();
    events(fuzzed, events, deletable);
    assertThat(outcome.resync().isPresent()).as("a resync delay").isEqualTo(answer.resyncExpected());
    outcome.resync().ifPresent(delay -> assertThat(delay).isGreaterThanOrEqualTo(MIN_RESYNC));
    return deletable.isEmpty() ? CONVERGED : CONVERGED_DELETING;
  }

  /**
   * What a refusal says, as the {@code SyncError} Event and the log line will: something, on one line, and not more
   * than an Event should carry however long the answer's strings (a name or a reason of any length is quoted by its
   * start).
   */
  private static void clearMessage(@Nullable String message) {
    assertThat(message).as("the refusal's message").isNotBlank();
    assertThat(message.length()).as("the length of the refusal's message: " + message)
        .isLessThanOrEqualTo(MAX_MESSAGE);
  }

  /**
   * Bounded work: no request made twice, so at most a write, a read and a delete per child name the sync knows and
   * one request per verb about the synced object.
   */
  private static void boundedRequests(Case fuzzed, List<RecordingApi.Action> actions) {
    Set<String> made = new HashSet<>();
    for (RecordingApi.Action action : actions) {
      assertThat(made.add(action.verb() + " " + action.resource() + " " + action.namespace() + "/" + action.name()))
          .as("made once: " + action + " in " + actions).isTrue();
    }
    int names = fuzzed.observed().size() + fuzzed.answer().desired().size();
    assertThat(actions.size()).as("requests of one sync: " + actions).isLessThanOrEqualTo(3 * names + 2);
  }

  private void namesTheApiServerTakes(List<RecordingApi.Action> actions) {
    for (RecordingApi.Action action : actions) {
      if (action.verb().equals("list")) {
        continue;
      }
      assertThat(FuzzedAnswers.validNamespace(action.namespace())).as("namespace of " + action).isTrue();
      boolean service = action.resource().equals("services");
      assertThat(service ? FuzzedAnswers.validServiceName(action.name()) : FuzzedAnswers.validName(action.name()))
          .as("name of " + action).isTrue();
    }
  }

  private void childRequests(Case fuzzed, List<RecordingApi.Action> actions, Set<String> deletable) {
    Set<String> desired = fuzzed.answer().desired();
    Set<String> toCreate = new LinkedHashSet<>(desired);
    toCreate.removeAll(fuzzed.observedNames());
    Set<String> toUpdate = new LinkedHashSet<>(desired);
    toUpdate.retainAll(fuzzed.live());
    List<String> deleted = new ArrayList<>();
    Set<String> created = new HashSet<>();
    for (RecordingApi.Action action : actions) {
      if (!action.resource().equals(children.resource())) {
        assertThat(action.resource()).as("resource of " + action).isEqualTo(parents.resource());
        continue;
      }
      assertThat(action.namespace()).as("namespace of " + action).isEqualTo(namespace);
      String name = action.name();
      switch (action.verb()) {
        case "delete" -> deleted.add(name);
        case "create", "apply-create" -> {
          assertThat(toCreate).as("a create asked for and not observed: " + action).contains(name);
          assertThat(created.add(name)).as("created once: " + action).isTrue();
        }
        case "get" -> assertThat(desired).as("read of " + action).contains(name);
        default -> assertThat(toUpdate).as("a write of a live child asked for: " + action).contains(name);
      }
      if (CHILD_WRITES.contains(action.verb())) {
        writtenChild(action);
      }
    }
    assertThat(deleted).as("deleted").containsExactlyInAnyOrderElementsOf(deletable);
    Set<String> mustCreate = new LinkedHashSet<>(toCreate);
    mustCreate.removeAll(traps.keySet());
    assertThat(created).as("created").containsAll(mustCreate);
  }

  /** A child as a create or an update writes it: its name, its ControllerRef, the engine's keys. */
  private void writtenChild(RecordingApi.Action action) {
    JsonNode body = KubeJson.mapper().readTree(action.body());
    JsonNode metadata = body.path("metadata");
    assertThat(metadata.path("name").asString(null)).as("name in " + action).isEqualTo(action.name());
    assertThat(metadata.path("namespace").asString(null)).as("namespace in " + action).isEqualTo(namespace);
    List<String> controllers = new ArrayList<>();
    for (JsonNode ref : metadata.path("ownerReferences")) {
      if (ref.path("controller").asBoolean(false)) {
        controllers.add(ref.path("uid").asString(""));
      }
    }
    assertThat(controllers).as("the controllers of " + action + ": " + metadata.path("ownerReferences"))
        .containsExactly(parentUid);
    Map<String, String> labels = strings(metadata.path("labels"));
    Map<String, String> annotations = strings(metadata.path("annotations"));
    labels.forEach((key, value) -> {
      if (key.startsWith(FuzzedAnswers.SHARD_PREFIX)) {
        assertThat(ownLabels).as("the engine's own label " + key + " in " + action).containsEntry(key, value);
      }
    });
    annotations.keySet().forEach(key -> assertThat(key).as("annotation of " + action)
        .doesNotStartWith(FuzzedAnswers.SHARD_PREFIX));
    assertThat(labels).as("labels of " + action).containsAllEntriesOf(engineLabels);
    assertThat(annotations).as("annotations of " + action).containsAllEntriesOf(engineAnnotations);
    if (CREATES.contains(action.verb())) {
      assertThat(labels).as("labels of " + action).containsAllEntriesOf(ownLabels);
    }
  }

  private static Map<String, String> strings(JsonNode map) {
    Map<String, String> strings = new LinkedHashMap<>();
    map.properties().forEach(entry -> strings.put(entry.getKey(), entry.getValue().asString(null)));
    return strings;
  }

  private void parentRequests(List<RecordingApi.Action> actions) {
    for (RecordingApi.Action action : actions) {
      if (action.resource().equals(children.resource())) {
        continue;
      }
      assertThat(action.namespace() + "/" + action.name()).as("the object of " + action)
          .isEqualTo(namespace + "/" + parentName);
      assertThat(parentVerbs).as("a request about the synced object: " + action).contains(action.verb());
      if (action.verb().equals("patch")) {
        JsonNode metadata = KubeJson.mapper().readTree(action.body()).path("metadata");
        for (String field : List.of("labels", "annotations")) {
          metadata.path(field).propertyNames().forEach(key -> assertThat(key).as(field + " of " + action)
              .doesNotStartWith(FuzzedAnswers.SHARD_PREFIX));
        }
      }
    }
  }

  private void trapsUntouched() {
    traps.forEach((name, before) -> assertThat(api.object(children, namespace, name).map(KubeObject::toTree))
        .as("someone else's " + name).contains(before));
  }

  private void events(Case fuzzed, List<String> events, Set<String> deletable) {
    int missing = 0;
    int hook = 0;
    for (String event : events) {
      String[] parts = event.split(" ", 4);
      String reason = parts[2];
      if (reason.equals("MissingChildren")) {
        missing++;
      } else if (reason.startsWith(FuzzedAnswers.EVENT_REASON)) {
        hook++;
      } else {
        assertThat(reason).as(event).isEqualTo("ChildConflict");
        assertThat(traps.keySet().stream().anyMatch(trap -> event.contains(namespace + "/" + trap + " ")))
            .as("a conflict over one of the traps: " + event).isTrue();
      }
    }
    boolean missingExpected = !fuzzed.answer().childrenGiven() && !deletable.isEmpty();
    assertThat(missing).as("MissingChildren Warnings: " + events).isEqualTo(missingExpected ? 1 : 0);
    assertThat(hook).as("the hook's Events: " + events).isEqualTo(fuzzed.answer().hookEvents());
  }

  /**
   * How a sync is set up besides its answer, drawn for each case.
   *
   * @param deleteGuard whether the controller carries {@code metareactor.dev/delete-guard: "true"}
   * @param strategy how children are written
   */
  public record Setup(boolean deleteGuard, ApplyStrategy strategy) {
    static Setup draw(SplittableRandom random) {
      return new Setup(random.nextBoolean(), ApplyStrategy.values()[random.nextInt(ApplyStrategy.values().length)]);
    }
  }

  /** One sync of a kind's fixture given a case; holds the rules ({@link #hold}) and says how it ended. */
  @FunctionalInterface
  public interface FuzzedSync {
    /** @param random for anything else the kind draws about its sync */
    String sync(Case fuzzed, Setup setup, SplittableRandom random);
  }

  /**
   * Runs every case of {@code cases}, quietly: an answer drawn from {@code answers} and a {@link Setup}, given to
   * {@code sync}; then checks that the run tried every outcome ({@link Tally#assertEveryOutcome}).
   */
  public static void run(FuzzCases cases, FuzzedAnswers answers, FuzzedSync sync) {
    Tally tally = new Tally();
    quietly(() -> cases.run((random, i) -> {
      Case fuzzed = answers.next(random);
      tally.add(fuzzed, sync.sync(fuzzed, Setup.draw(random), random));
    }));
    tally.assertEveryOutcome(cases.count());
  }

  /**
   * Runs {@code cases} with the engine's log lines quieted to errors (a warning per answer without children, a line
   * per ignored key...): thousands of answers would fill the test's output.
   */
  public static void quietly(Runnable cases) {
    Logger logger = (Logger) LoggerFactory.getLogger("dev.metareactor.engine");
    Level level = logger.getLevel();
    logger.setLevel(Level.ERROR);
    try {
      cases.run();
    } finally {
      logger.setLevel(level);
    }
  }

  /** How the syncs of a run ended, and what their answers held: to show that a run tried every outcome. */
  private static final class Tally {
    private final Map<String, Integer> outcomes = new TreeMap<>();
    private final Map<String, Integer> shapes = new TreeMap<>();

    /** Counts one sync of {@code fuzzed} that ended as {@code outcome} ({@link #hold}). */
    public void add(Case fuzzed, String outcome) {
      outcomes.merge(fuzzed.answer().verdict() + " " + outcome, 1, Integer::sum);
      List<String> held = fuzzed.answer().shapes().isEmpty() ? List.of("well-formed") : fuzzed.answer().shapes();
      held.forEach(shape -> shapes.merge(shape, 1, Integer::sum));
    }

    /**
     * Each way a sync may end ({@link #REFUSED}, {@link #REFUSED_BY_THE_GUARD}, {@link #CONVERGED},
     * {@link #CONVERGED_DELETING}) came at least once in 50 of the {@code cases}, when there are 200 or more: else the
     * generator has drifted and the run proves little.
     */
    public void assertEveryOutcome(int cases) {
      if (cases < 200) {
        return;
      }
      for (String outcome : List.of(REFUSED, REFUSED_BY_THE_GUARD, CONVERGED, CONVERGED_DELETING)) {
        int count = outcomes.entrySet().stream().filter(entry -> entry.getKey().endsWith(" " + outcome))
            .mapToInt(Map.Entry::getValue).sum();
        assertThat(count).as(outcome + " in " + this).isGreaterThanOrEqualTo(cases / 50);
      }
    }

    @Override
    public String toString() {
      return "outcomes " + outcomes + ", shapes " + shapes;
    }
  }
}
