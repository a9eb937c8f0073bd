package dev.metareactor.engine.controller;

import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.hook.HookResponseException;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a sync does with a sync answer that would delete owned objects by mistake rather than by intent: one without
 * its children field at all (absent or {@code null}, not {@code []}: a hook that forgot it, or that sent a
 * half-built answer), and one dropping most of them at once. Metacontroller reads a missing field as an empty list
 * and deletes every child; so does the engine by default, with a {@value #MISSING_CHILDREN} Warning on the object and
 * a log line. Under {@link DeleteGuardAnnotation} both answers are refused whole ({@link HookResponseException}, so
 * a {@code SyncError} and a retry with backoff), before anything of them is written.
 *
 * <p>Only what the answer would really delete counts: owned objects it does not name that are not already being
 * deleted. A {@code Recreate} of a changed child is not a deletion here: the next sync creates it again. Out of
 * scope by design (the caller leaves them out): finalize answers and a MapController's tombstone answers, whose
 * purpose is to tear down, and syncs of an object being deleted, which delete nothing.
 */
final class DeleteGuard {

  /** The reason of the Warning about an answer without its children field. */
  static final String MISSING_CHILDREN = "MissingChildren";

  private static final Logger LOG = LoggerFactory.getLogger(DeleteGuard.class);

  private final boolean on;
  private final String controller;
  private final String ownedField;
  private final ParentEvents events;

  /**
   * @param on whether answers that fail the rules are refused ({@link DeleteGuardAnnotation})
   * @param controller {@code <Kind> <name>} of the controller, for messages
   * @param ownedField the answer's field for owned objects ({@code children}, {@code attachments}, {@code outputs})
   * @param events where the {@value #MISSING_CHILDREN} Warning goes
   */
  DeleteGuard(boolean on, String controller, String ownedField, ParentEvents events) {
    this.on = on;
    this.controller = Objects.requireNonNull(controller, "controller");
    this.ownedField = Objects.requireNonNull(ownedField, "ownedField");
    this.events = Objects.requireNonNull(events, "events");
  }

  /**
   * With the guard on, refuses an answer without its children field that would delete any owned object, and one
   * that would delete more than half of the live owned objects at once, and more than one. Does nothing else, so it
   * may be called more than once about one answer.
   *
   * @param observed the owned objects the answer is converged against
   * @param desired the owned objects the answer asks for, as checked by the kind
   * @throws HookResponseException saying which rule, with the counts
   */
  void check(SyncResponse answer, Map<ChildType, List<KubeObject>> observed, List<DesiredChild> desired) {
    if (!on) {
      return;
    }
    int deleted = count(ChildrenManager.undesired(observed, desired));
    if (!answer.childrenGiven() && deleted > 0) {
      throw new HookResponseException("the answer has no \"" + ownedField + "\" (absent or null, not []), which"
          + " would delete all " + deleted + " observed; refused under " + DeleteGuardAnnotation.KEY + ", nothing"
          + " written (answer \"" + ownedField + "\": [] to delete them)");
    }
    int live = live(observed);
    if (deleted > 1 && deleted * 2 > live) {
      throw new HookResponseException("the answer would delete " + deleted + " of the " + live + " observed "
          + ownedField + " at once, more than half; refused under " + DeleteGuardAnnotation.KEY + ", nothing"
          + " written (delete them in smaller steps)");
    }
  }

  /**
   * Without the guard, says on {@code object} and in the log that an answer without its children field deletes
   * every live owned object, as Metacontroller does; nothing when there are none.
   *
   * @param about what the sync was about beyond the object ({@link SyncKey#about}), before the message
   */
  void reportMissing(KubeObject object, String about, SyncResponse answer,
      Map<ChildType, List<KubeObject>> observed) {
    if (answer.childrenGiven()) {
      return;
    }
    int deleted = live(observed);
    if (deleted == 0) {
      return;
    }
    String message = about + "the sync answer has no \"" + ownedField + "\" (absent or null, not []): deleting all "
        + deleted + " observed, as Metacontroller does; annotate the controller " + DeleteGuardAnnotation.KEY
        + "=true to refuse such answers";
    LOG.warn("{}: {} {}: {}", controller, object.kind(), object.namespacedName(), message);
    events.record(object, EventRecorder.Type.Warning, MISSING_CHILDREN, message);
  }

  private static int live(Map<ChildType, List<KubeObject>> observed) {
    int live = 0;
    for (List<KubeObject> children : observed.values()) {
      for (KubeObject child : children) {
        if (!child.deleting()) {
          live++;
        }
      }
    }
    return live;
  }

  private static int count(Map<ChildType, List<KubeObject>> byType) {
    return byType.values().stream().mapToInt(List::size).sum();
  }
}
