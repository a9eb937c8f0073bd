package dev.metareactor.engine.controller.rolling;

import dev.metareactor.engine.controller.ChildClaimer;
import dev.metareactor.engine.controller.ChildType;
import dev.metareactor.engine.controller.DesiredChild;
import dev.metareactor.engine.controller.HookCall;
import dev.metareactor.engine.controller.SyncedObject;
import dev.metareactor.engine.controller.WriteBatch;
import dev.metareactor.engine.controller.apply.ChildApplier;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.ObjectApi;
import dev.metareactor.engine.selector.LabelSelector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A rolling CompositeController's part of a parent's sync, between the claim of its children and their writes:
 *
 * <ol>
 *   <li>the parent's ControllerRevisions claimed like children ({@link ChildClaimer}, from the revision informer's
 *       owner and label indexes: the parent's selector and the parent resource's {@code apiGroup} and
 *       {@code resource} labels), with revisions this controller wrote and the cache does not show yet in their
 *       place ({@link WrittenRevisions});</li>
 *   <li>the latest revision: the one whose {@code parentPatch} records the parent's current fields, else a new
 *       one;</li>
 *   <li>the hook called concurrently once per live revision — the latest, and each older one that still claims a
 *       child — with the parent as that revision recorded it; any failure fails the sync, as does a latest answer
 *       the delete guard refuses ({@link HookCall#checkDeletions});</li>
 *   <li>one {@link Rollout} step, the parent's status from the latest answer with the {@code Updated} condition,
 *       {@code resyncAfterSeconds} the smallest any answer asked for, {@code finalized} only when all agree;</li>
 *   <li>the revisions written — unused ones deleted (with a UID precondition), changed claims updated, a new latest
 *       created — before any child is, so that an engine stopped at any point resumes the rollout where it
 *       stopped.</li>
 * </ol>
 */
public final class RollingUpdate {

  private static final Logger LOG = LoggerFactory.getLogger(RollingUpdate.class);

  /** The resource Metacontroller's ControllerRevisions are served as. */
  public static final String REVISIONS_API_VERSION = RevisionObject.API_VERSION;
  public static final String REVISIONS_RESOURCE = "controllerrevisions";

  private final ApiResource parentResource;
  private final List<String> fieldPaths;
  private final boolean generateSelector;
  private final ChildType revisions;
  private final ChildClaimer claimer;
  private final ObjectApi api;
  private final int hookConcurrency;
  private final ChildApplier applier;
  private final Map<String, String> ownLabels;
  private final Rollout rollout;
  private final LabelSelector revisionLabels;
  private final WrittenRevisions written = new WrittenRevisions();

  /**
   * @param fieldPaths {@code revisionHistory.fieldPaths} (empty for the default)
   * @param rules the rolling child rules
   * @param revisions the ControllerRevision resource and its informer
   * @param applier how children are written: it says whether a child is up to date
   * @param ownLabels the engine's labels on every revision it writes ({@code --sharding}'s owner label)
   * @param hookConcurrency the most hook calls of one sync at once (the controller's workers)
   */
  public RollingUpdate(ApiResource parentResource, List<String> fieldPaths, boolean generateSelector,
      List<Rollout.Rule> rules, ChildType revisions, ChildClaimer claimer, ObjectApi api, ChildApplier applier,
      Map<String, String> ownLabels, int hookConcurrency) {
    this.parentResource = Objects.requireNonNull(parentResource, "parentResource");
    this.fieldPaths = List.copyOf(fieldPaths);
    this.generateSelector = generateSelector;
    this.revisions = Objects.requireNonNull(revisions, "revisions");
    this.claimer = Objects.requireNonNull(claimer, "claimer");
    this.api = Objects.requireNonNull(api, "api");
    this.applier = Objects.requireNonNull(applier, "applier");
    this.ownLabels = Map.copyOf(ownLabels);
    if (hookConcurrency < 1) {
      throw new IllegalArgumentException("hookConcurrency must be at least 1, got " + hookConcurrency);
    }
    this.hookConcurrency = hookConcurrency;
    this.rollout = new Rollout(rules);
    ObjectNode selector = KubeJson.nodes().objectNode();
    selector.putObject("matchLabels")
        .put(RevisionObject.API_GROUP_LABEL, parentResource.group())
        .put(RevisionObject.RESOURCE_LABEL, parentResource.resource());
    this.revisionLabels = LabelSelector.fromApi(selector);
  }

  /**
   * What one sync decided.
   *
   * @param response the combined answer: the latest revision's status with the {@code Updated} condition, its
   *     children, the smallest {@code resyncAfterSeconds}, {@code finalized} when every answer says so
   * @param desired the children to converge to, each with the state of the revision that holds it, in the latest
   *     answer's order
   * @param latestBody the latest revision's answer as the hook sent it, for the fields the kind reads itself
   */
  public record Step(SyncResponse response, List<DesiredChild> desired, JsonNode latestBody) {}

  /** A revision of this sync with the parent it recorded. */
  private record Live(RevisionObject revision, ObjectNode parent) {}

  /**
   * One sync's rollout step, revisions written.
   *
   * @param parentJson the parent as sent to the hook
   * @param selector the parent's child selector
   * @param observed the parent's children
   * @param hook calls the chosen hook
   * @param check checks one answer (its children by the same rules as without revisions, and the fields the kind
   *     reads itself)
   */
  public Mono<Step> sync(SyncedObject synced, ObjectNode parentJson, LabelSelector selector,
      Map<ChildType, List<KubeObject>> observed, HookCall hook,
      Function<HookCall.Reply, List<DesiredChild>> check) {
    KubeObject parent = synced.object();
    RevisionPatch patch;
    Map<String, String> labels;
    try {
      patch = RevisionPatch.of(parentJson, fieldPaths);
      labels = RevisionObject.labels(parentResource.resource(), parentResource.group(), parent, generateSelector);
    } catch (IllegalArgumentException e) {
      return Mono.error(new IllegalStateException("can't make a ControllerRevision: " + e.getMessage(), e));
    }
    if (!selector.matches(labels)) {
      return Mono.error(new IllegalStateException("can't make a ControllerRevision: its labels " + labels
          + " (spec.template.metadata.labels) don't match the parent's selector (" + selector + ")"));
    }
    Map<String, String> labelsWritten = withOwnLabels(labels);
    return claimer.claim(parent, parentResource, selector.and(revisionLabels), List.of(revisions))
        .flatMap(claimed -> {
          List<RevisionObject> found = written.current(parent.storedUid(),
              claimed.getOrDefault(revisions, List.of()).stream().map(RevisionObject::read).toList());
          RevisionObject latest = null;
          List<Live> older = new ArrayList<>();
          for (RevisionObject revision : found) {
            try {
              RevisionPatch recorded = RevisionPatch.recorded(revision.parentPatch(), fieldPaths);
              if (latest == null && recorded.sameAs(patch)) {
                latest = revision;
              } else {
                older.add(new Live(revision,
                    revision.claims().isEmpty() ? parentJson : recorded.applyTo(parentJson)));
              }
            } catch (IllegalArgumentException e) {
              return Mono.error(new IllegalStateException("ControllerRevision " + revision.name() + ": "
                  + e.getMessage() + "; delete it to go on"));
            }
          }
          RevisionObject current = latest != null ? latest
              : RevisionObject.latest(parentResource.resource(), parentResource.group(), parent, patch);
          return step(synced, current, older, observed, hook, check)
              .flatMap(step -> writeRevisions(parent, labelsWritten, current, older, step.result())
                  .thenReturn(new Step(step.response(), step.desired(), step.latestBody())));
        });
  }

  /** A revision's labels and the engine's own ({@code --sharding}'s owner label). */
  private Map<String, String> withOwnLabels(Map<String, String> labels) {
    if (ownLabels.isEmpty()) {
      return labels;
    }
    Map<String, String> all = new LinkedHashMap<>(labels);
    all.putAll(ownLabels);
    return all;
  }

  /** The hook answers and the rollout step, before anything is written. */
  private record Decided(Rollout.Result result, SyncResponse response, List<DesiredChild> desired,
      JsonNode latestBody) {}

  private Mono<Decided> step(SyncedObject synced, RevisionObject latest, List<Live> older,
      Map<ChildType, List<KubeObject>> observed, HookCall hook,
      Function<HookCall.Reply, List<DesiredChild>> check) {
    boolean parentNamespaced = parentResource.namespaced();
    List<Mono<HookCall.Reply>> calls = new ArrayList<>();
    calls.add(hook.call());
    List<Live> called = older.stream().filter(live -> !live.revision().claims().isEmpty()).toList();
    called.forEach(live -> calls.add(hook.call(live.parent(), live.revision().name())));
    return Flux.fromIterable(calls).flatMapSequential(call -> call, hookConcurrency).collectList()
        .map(replies -> {
          SyncResponse latestResponse = replies.get(0).response();
          List<DesiredChild> latestChildren = check.apply(replies.get(0));
          // The latest answer names the children to keep; refused by the delete guard before revisions are written.
          hook.checkDeletions(latestResponse, latestChildren);
          Map<String, Rollout.Revision> byName = new LinkedHashMap<>();
          for (int i = 0; i < called.size(); i++) {
            RevisionObject revision = called.get(i).revision();
            List<DesiredChild> children;
            try {
              children = check.apply(replies.get(i + 1));
            } catch (HookResponseException e) {
              throw new HookResponseException("for ControllerRevision " + revision.name() + ": " + e.getMessage());
            }
            byName.put(revision.name(), new Rollout.Revision(revision.name(), revision.claims(),
                desiredMap(children, parentNamespaced)));
          }
          List<Rollout.Revision> olderRevisions = older.stream()
              .map(live -> byName.getOrDefault(live.revision().name(),
                  new Rollout.Revision(live.revision().name(), live.revision().claims(), Map.of())))
              .toList();
          Map<ClaimedChild, Observed> children = observedByClaim(observed, parentNamespaced);
          KubeObject parent = synced.object();
          Rollout.Result result = rollout.step(
              new Rollout.Revision(latest.name(), latest.claims(),
                  desiredMap(latestChildren, parentNamespaced)),
              olderRevisions, claim -> {
                Observed child = children.get(claim);
                return child == null ? null : child.object().toTree();
              }, (claim, desired) -> {
                Observed child = Objects.requireNonNull(children.get(claim), "an observed child");
                if (!(desired instanceof ObjectNode wanted)) {
                  throw new IllegalArgumentException("not a JSON object");
                }
                return applier.change(parent, child.resource(), child.object(), wanted) == null;
              });
          ObjectNode status;
          try {
            status = result.updated().applyTo(latestResponse.status());
          } catch (IllegalArgumentException e) {
            throw new HookResponseException(String.valueOf(e.getMessage()));
          }
          List<DesiredChild> desired = new ArrayList<>(latestChildren.size());
          for (DesiredChild child : latestChildren) {
            // Every state is a checked desired object: the latest's, or the one of the revision that holds it.
            JsonNode state = result.desiredChildren().get(claimOf(child, parentNamespaced));
            desired.add(state instanceof ObjectNode object && state != child.object()
                ? new DesiredChild(child.type(), object) : child);
          }
          return new Decided(result, combined(status, latestResponse, replies), desired, replies.get(0).body());
        });
  }

  /** {@code children} keyed by claim, in the answer's order. */
  private static Map<ClaimedChild, JsonNode> desiredMap(List<DesiredChild> children, boolean parentNamespaced) {
    Map<ClaimedChild, JsonNode> map = new LinkedHashMap<>();
    children.forEach(child -> map.put(claimOf(child, parentNamespaced), child.object()));
    return map;
  }

  private static ClaimedChild claimOf(DesiredChild child, boolean parentNamespaced) {
    return ClaimedChild.of(child.type().resource(), parentNamespaced, child.namespace(), child.name());
  }

  /** An observed child and its resource. */
  private record Observed(ApiResource resource, KubeObject object) {}

  private static Map<ClaimedChild, Observed> observedByClaim(Map<ChildType, List<KubeObject>> observed,
      boolean parentNamespaced) {
    Map<ClaimedChild, Observed> byClaim = new HashMap<>();
    observed.forEach((type, children) -> children.forEach(child -> byClaim.put(
        ClaimedChild.of(type.resource(), parentNamespaced, child.namespace(), child.name()),
        new Observed(type.resource(), child))));
    return byClaim;
  }

  /** The latest answer with {@code status}, the smallest positive resync and {@code finalized} when all agree. */
  private static SyncResponse combined(ObjectNode status, SyncResponse latest, List<HookCall.Reply> replies) {
    Duration resyncAfter = null;
    boolean finalized = true;
    for (HookCall.Reply reply : replies) {
      Duration asked = reply.response().resyncAfter();
      if (asked != null && !asked.isZero() && !asked.isNegative()
          && (resyncAfter == null || asked.compareTo(resyncAfter) < 0)) {
        resyncAfter = asked;
      }
      finalized &= reply.response().finalized();
    }
    return new SyncResponse(status, latest.children(), latest.childrenGiven(), resyncAfter, finalized,
        latest.events());
  }

  /**
   * Deletes the revisions nobody needs, updates those whose claims changed and creates the latest if it is new;
   * each write remembered until the cache shows it.
   */
  private Mono<Void> writeRevisions(KubeObject parent, Map<String, String> labels, RevisionObject latest,
      List<Live> older, Rollout.Result result) {
    String parentUid = parent.storedUid();
    List<Mono<Void>> writes = new ArrayList<>();
    if (latest.uid() == null) {
      writes.add(create(parent, labels, latest.claiming(result.latest())));
    } else if (!latest.claims().equals(result.latest())) {
      writes.add(update(parent, labels, latest, result.latest()));
    }
    for (Live live : older) {
      RevisionObject revision = live.revision();
      RevisionClaims claims = result.older().get(revision.name());
      if (claims == null) {
        writes.add(api.delete(revisions.resource(), parent.namespace(), revision.name(), revision.uid())
            .doOnSuccess(done -> {
              written.wrote(parentUid, revision.name(), revision, null);
              LOG.debug("{}: deleted ControllerRevision {}", parent.describe(), revision.name());
            })
            .onErrorResume(e -> ApiException.codeOf(e) == 404 || ApiException.codeOf(e) == 409, e -> Mono.empty())
            .onErrorMap(e -> failure("delete", revision, e)));
      } else if (!claims.equals(revision.claims())) {
        writes.add(update(parent, labels, revision, claims));
      }
    }
    return WriteBatch.run("can't manage ControllerRevisions", writes);
  }

  private Mono<Void> create(KubeObject parent, Map<String, String> labels, RevisionObject revision) {
    return api.create(revisions.resource(), revision.toObject(parent, labels))
        .doOnNext(created -> {
          written.wrote(parent.storedUid(), revision.name(), null, RevisionObject.read(created.object()));
          LOG.debug("{}: created ControllerRevision {}", parent.describe(), revision.name());
        })
        .onErrorMap(e -> ApiException.codeOf(e) != 409, e -> failure("create", revision, e))
        .then();
  }

  /** Updates the claims (a 409 syncs the parent again: the revision changed since the cache showed it). */
  private Mono<Void> update(KubeObject parent, Map<String, String> labels, RevisionObject revision,
      RevisionClaims claims) {
    RevisionObject changed = revision.claiming(claims);
    ObjectNode object = changed.toObject(parent, labels);
    return api.update(revisions.resource(), object)
        .doOnNext(updated -> written.wrote(parent.storedUid(), revision.name(), revision,
            RevisionObject.read(updated.object())))
        .onErrorMap(e -> ApiException.codeOf(e) != 409, e -> failure("update", revision, e))
        .then();
  }

  private static Throwable failure(String verb, RevisionObject revision, Throwable cause) {
    return new IllegalStateException("can't " + verb + " ControllerRevision " + revision.name() + ": "
        + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage()), cause);
  }

  @Override
  public String toString() {
    return "rolling update of " + parentResource;
  }
}
