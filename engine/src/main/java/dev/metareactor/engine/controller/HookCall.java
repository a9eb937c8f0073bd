package dev.metareactor.engine.controller;

import dev.metareactor.engine.hook.SyncResponse;
import java.util.List;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A call of a sync's hook with the request the sync built (the synced object, its owned and related objects, the
 * kind's own fields), as a {@link Plan.Answering} makes it.
 */
public interface HookCall {

  /** Calls the hook with the request as built; the answer parsed. */
  Mono<Reply> call();

  /**
   * Calls it with {@code object} in the synced object's place (the parent as an older ControllerRevision recorded
   * it); {@code variant} names that version of the object, and keeps its ETag cache entry apart.
   */
  Mono<Reply> call(ObjectNode object, String variant);

  /**
   * Refuses, under the controller's {@code metareactor.dev/delete-guard}, an answer of {@link #call()} whose desired
   * owned objects would delete observed ones by mistake ({@link DeleteGuard#check}). The sync checks the answer it
   * converges itself; a kind calls this only when it writes something before that (a rolling CompositeController's
   * revisions), so that a refused answer writes nothing.
   *
   * @param desired the owned objects the answer asks for, as checked by the kind
   * @throws dev.metareactor.engine.hook.HookResponseException naming the rule and the counts
   */
  void checkDeletions(SyncResponse answer, List<DesiredChild> desired);

  /** A parsed answer and the body it was parsed from. */
  record Reply(SyncResponse response, JsonNode body) {}
}
