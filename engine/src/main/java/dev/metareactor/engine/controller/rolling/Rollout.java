package dev.metareactor.engine.controller.rolling;

import dev.metareactor.engine.api.StatusCheck;
import dev.metareactor.engine.api.UpdateMethod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * One sync's step of a rolling update: given the latest revision, the older revisions that still claim children,
 * each revision's desired children (its own sync hook answer) and the observed children, decides which revision
 * owns which child after this sync, which desired state each child gets, and the parent's {@code Updated}
 * condition. Pure: no I/O; the caller writes the revisions before the children, so that an engine restarted in the
 * middle of a rollout resumes where it stopped.
 *
 * <p>The rules, as Metacontroller's:
 * <ol>
 *   <li>Claims are cleaned first: a revision keeps a claim only for a child of a rolling kind that the latest
 *       revision still desires (any other is deleted now, so its claim is moot), and a child claimed twice belongs
 *       to the earlier revision, the latest first.</li>
 *   <li>A rolling child the latest revision desires and nobody claims goes to the latest revision; one claimed by an
 *       older revision moves at once if writing the latest desired state over it would change nothing.</li>
 *   <li>Then, in the order of the latest answer, the first rolling child not on the latest revision moves — only if
 *       every child already on the latest revision exists, is up to date, for {@code RollingInPlace} has observed its
 *       generation (when it reports {@code status.observedGeneration}), and passes its rule's status checks. At most
 *       one child moves per sync: a change of a child's status syncs the parent again, and the rollout advances as
 *       fast as children become ready.</li>
 *   <li>A child still claimed by an older revision gets that revision's desired state, if it answered one.</li>
 * </ol>
 * Where Metacontroller keeps the claims it meant to clean (step 1 drops them only from its lookup, not from the
 * revision), this drops them from the revision too: a child the latest revision no longer wants is not kept alive by
 * an older revision's answer.
 */
public final class Rollout {

  /** How children of one API group and kind roll: the rule's method (a rolling one) and status checks. */
  public record Rule(String apiGroup, String kind, UpdateMethod method, List<StatusCheck> checks) {

    public Rule {
      if (!method.rolling()) {
        throw new IllegalArgumentException(kind + "." + apiGroup + ": " + method + " is not a rolling method");
      }
      checks = List.copyOf(checks);
    }
  }

  /**
   * A revision as this sync sees it.
   *
   * @param name the ControllerRevision's name
   * @param claims the children it claims (for a new revision, none)
   * @param desired the children its sync hook answered, in the answer's order
   */
  public record Revision(String name, RevisionClaims claims, Map<ClaimedChild, JsonNode> desired) {

    public Revision {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(claims, "claims");
      desired = Collections.unmodifiableMap(new LinkedHashMap<>(desired));
    }
  }

  /**
   * Whether writing {@code desired} over the observed {@code child} (which exists) would change nothing; throws when
   * it cannot tell.
   */
  @FunctionalInterface
  public interface UpdateCheck {
    boolean unchanged(ClaimedChild child, JsonNode desired);
  }

  /** The parent's {@code Updated} condition after this step. */
  public record Condition(String status, String reason, String message) {

    public static final String TYPE = "Updated";

    static Condition waiting(String why) {
      return new Condition("False", "RolloutWaiting", why);
    }

    static Condition progressing(ClaimedChild child) {
      return new Condition("False", "RolloutProgressing", "updating " + child);
    }

    static Condition onLatest(String revision) {
      return new Condition("True", "OnLatestRevision", "latest ControllerRevision: " + revision);
    }

    /**
     * {@code status} (the latest revision's answer; {@code null} or not an object for none) with this condition in
     * its {@code conditions}: replacing the first of type {@code Updated}, else appended.
     *
     * @throws IllegalArgumentException when the status has {@code conditions} that are not a list
     */
    public ObjectNode applyTo(@Nullable JsonNode status) {
      ObjectNode result = status != null && status.isObject()
          ? (ObjectNode) status.deepCopy()
          : JsonNodeFactory.instance.objectNode();
      JsonNode conditions = result.get("conditions");
      if (conditions != null && !conditions.isNull() && !conditions.isArray()) {
        throw new IllegalArgumentException("the sync hook's status.conditions is not a list");
      }
      ArrayNode list = conditions instanceof ArrayNode array ? array : result.putArray("conditions");
      ObjectNode condition = JsonNodeFactory.instance.objectNode().put("type", TYPE).put("status", status());
      if (!reason.isEmpty()) {
        condition.put("reason", reason);
      }
      if (!message.isEmpty()) {
        condition.put("message", message);
      }
      for (int i = 0; i < list.size(); i++) {
        if (TYPE.equals(list.get(i).path("type").asString(null))) {
          list.set(i, condition);
          return result;
        }
      }
      list.add(condition);
      return result;
    }
  }

  /**
   * What this step decided.
   *
   * @param latest the latest revision's claims
   * @param older the older revisions still claiming a child, by name, in the order given; the others are to be
   *     deleted
   * @param updated the parent's {@code Updated} condition
   * @param desiredChildren every desired child (rolling or not) with the state to write, in the latest answer's order
   */
  public record Result(RevisionClaims latest, Map<String, RevisionClaims> older, Condition updated,
      Map<ClaimedChild, JsonNode> desiredChildren) {}

  private final Map<String, Rule> rules = new HashMap<>();

  /** A rollout over these rolling rules (one per API group and kind). */
  public Rollout(List<Rule> rules) {
    for (Rule rule : rules) {
      this.rules.put(key(rule.apiGroup(), rule.kind()), rule);
    }
  }

  /**
   * One step.
   *
   * @param latest the revision whose patch is the parent's current one
   * @param older the other revisions, in the order they were found
   * @param observed the observed child of a claim, or {@code null} when there is none
   * @param check decides whether a child is up to date (as the apply strategy writes it)
   */
  public Result step(Revision latest, List<Revision> older, Function<ClaimedChild, @Nullable JsonNode> observed,
      UpdateCheck check) {
    Objects.requireNonNull(check, "check");
    List<Revision> all = new ArrayList<>(older.size() + 1);
    all.add(latest);
    all.addAll(older);
    // Step 1: each child claimed once, by the earliest revision, and only if rolling and still wanted by latest.
    Map<ClaimedChild, Integer> owner = new HashMap<>();
    List<RevisionClaims> claims = new ArrayList<>(all.size());
    for (int i = 0; i < all.size(); i++) {
      int revision = i;
      claims.add(all.get(i).claims().keep(child -> rolling(child) && latest.desired().containsKey(child)
          && owner.putIfAbsent(child, revision) == null));
    }
    // Step 2: unclaimed children go to latest; a child that latest's state would not change moves at once.
    for (Map.Entry<ClaimedChild, JsonNode> entry : latest.desired().entrySet()) {
      ClaimedChild child = entry.getKey();
      if (!rolling(child)) {
        continue;
      }
      Integer revision = owner.get(child);
      if (revision == null
          || revision != 0 && observed.apply(child) != null && alreadyAsLatest(child, entry.getValue(), check)) {
        move(child, revision, claims, owner);
      }
    }
    // Step 3: the next child, in the answer's order, if every child on latest is happy.
    Condition updated = Condition.onLatest(latest.name());
    for (ClaimedChild child : latest.desired().keySet()) {
      Integer revision = owner.get(child);
      if (!rolling(child) || revision == null || revision == 0) {
        continue;
      }
      Optional<String> blocked = blocker(claims.get(0), latest, observed, check);
      if (blocked.isPresent()) {
        updated = Condition.waiting(blocked.get());
      } else {
        move(child, revision, claims, owner);
        updated = Condition.progressing(child);
      }
      break;
    }
    // Step 4: what each child is to be: latest's state unless an older revision still holds it.
    Map<ClaimedChild, JsonNode> desired = new LinkedHashMap<>(latest.desired());
    Map<String, RevisionClaims> kept = new LinkedHashMap<>();
    for (int i = 1; i < all.size(); i++) {
      Revision revision = all.get(i);
      if (claims.get(i).isEmpty()) {
        continue;
      }
      kept.put(revision.name(), claims.get(i));
      for (ClaimedChild child : claims.get(i).children()) {
        JsonNode state = revision.desired().get(child);
        if (state != null) {
          desired.put(child, state);
        }
      }
    }
    return new Result(claims.get(0), kept, updated, desired);
  }

  private void move(ClaimedChild child, @Nullable Integer from, List<RevisionClaims> claims,
      Map<ClaimedChild, Integer> owner) {
    if (from != null) {
      claims.set(from, claims.get(from).without(child));
    }
    claims.set(0, claims.get(0).with(child));
    owner.put(child, 0);
  }

  /** Whether the observed child is already what latest wants: a move that writes nothing. */
  private static boolean alreadyAsLatest(ClaimedChild child, JsonNode desired, UpdateCheck check) {
    try {
      return check.unchanged(child, desired);
    } catch (RuntimeException cannotTell) {
      return false;
    }
  }

  /** Why the rollout must wait: the first child on latest that is missing, stale or not ready. */
  private Optional<String> blocker(RevisionClaims onLatest, Revision latest,
      Function<ClaimedChild, @Nullable JsonNode> observed, UpdateCheck check) {
    for (ClaimedChild child : onLatest.children()) {
      Rule rule = rules.get(key(child.apiGroup(), child.kind()));
      JsonNode desired = latest.desired().get(child);
      if (rule == null || desired == null) {
        continue;
      }
      JsonNode current = observed.apply(child);
      if (current == null) {
        return Optional.of("missing child " + child);
      }
      try {
        if (!check.unchanged(child, desired)) {
          return Optional.of("child " + child + " is not updated yet");
        }
      } catch (RuntimeException e) {
        return Optional.of("can't check if child " + child + " is updated: " + e.getMessage());
      }
      if (rule.method() == UpdateMethod.ROLLING_IN_PLACE && !observedItsGeneration(current)) {
        return Optional.of("child " + child + " with RollingInPlace update strategy hasn't observed latest spec");
      }
      for (StatusCheck statusCheck : rule.checks()) {
        Optional<String> failure = statusCheck.failureOn(current);
        if (failure.isPresent()) {
          return Optional.of("child " + child + " failed status check: " + failure.get());
        }
      }
    }
    return Optional.empty();
  }

  /** Children that do not report {@code status.observedGeneration} (as an integer above 0) are taken as current. */
  private static boolean observedItsGeneration(JsonNode child) {
    JsonNode observedGeneration = child.path("status").path("observedGeneration");
    if (!observedGeneration.isIntegralNumber() || !observedGeneration.canConvertToLong()
        || observedGeneration.longValue() <= 0) {
      return true;
    }
    return observedGeneration.longValue() >= child.path("metadata").path("generation").asLong(0);
  }

  private boolean rolling(ClaimedChild child) {
    return rules.containsKey(key(child.apiGroup(), child.kind()));
  }

  private static String key(String apiGroup, String kind) {
    return kind + "." + apiGroup;
  }
}
