package dev.metareactor.engine.controller;

import dev.metareactor.engine.hook.HookCaller;
import dev.metareactor.engine.hook.SyncResponse;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A kind's part of one sync, as a value ({@link Kind#plan}): the objects the synced object owns as its hook sees
 * them, and either a hook {@link Call} (which hook, what the call is about, the kind's own request fields, how the
 * answer is checked) or {@link KeepNothing}: no hook to ask, no owned object kept.
 */
public sealed interface Plan {

  /** The objects the synced object owns, as its hook sees them; an entry for every declared type. */
  Mono<Map<ChildType, List<KubeObject>>> owned();

  /**
   * A call of the hook the synced object's state chooses (finalize while it is being deleted or no longer selected,
   * when the controller has one; else sync), about the synced object, with no request field of the kind's own, made
   * and answered by {@code answering} ({@link Answering#checkedBy} for one call).
   */
  static Call call(SyncedObject synced, Mono<Map<ChildType, List<KubeObject>>> owned, Answering answering) {
    KubeObject object = synced.object();
    return new Call(owned, null, new HookCaller.RootObject(object.kind(), object.namespace(), object.name()),
        KubeJson.nodes().objectNode(), answering);
  }

  /**
   * A hook call.
   *
   * @param hook the hook to call, or {@code null} for the one the synced object's state chooses
   * @param root what the call is about for the hook client's ETag cache: the synced object, or a part of it
   * @param fields the kind's own request fields, set after the synced object's (a MapController's {@code mapKey} and
   *     {@code input})
   * @param answering calls the hook and checks its answer whole before anything is written
   */
  record Call(Mono<Map<ChildType, List<KubeObject>>> owned, @Nullable ChosenHook hook, HookCaller.RootObject root,
      ObjectNode fields, Answering answering) implements Plan {

    public Call {
      Objects.requireNonNull(owned, "owned");
      Objects.requireNonNull(root, "root");
      Objects.requireNonNull(fields, "fields");
      Objects.requireNonNull(answering, "answering");
    }

    /** The same call of {@code chosen} instead. */
    public Call calling(ChosenHook chosen) {
      return new Call(owned, Objects.requireNonNull(chosen, "chosen"), root, fields, answering);
    }

    /** The same call about {@code about}. */
    public Call about(HookCaller.RootObject about) {
      return new Call(owned, hook, about, fields, answering);
    }

    /** The same call with {@code kindFields} in the request. */
    public Call with(ObjectNode kindFields) {
      return new Call(owned, hook, root, kindFields, answering);
    }
  }

  /**
   * No hook to ask: every owned object is deleted (unless the synced object is being deleted: that is the garbage
   * collector's), then the kind's own writes. A MapController's input that went away, without a tombstone hook or
   * without outputs left.
   *
   * @param ownWrites the kind's writes to the synced object, as in {@link Answer#ownWrites}
   */
  record KeepNothing(Mono<Map<ChildType, List<KubeObject>>> owned, Supplier<Mono<Boolean>> ownWrites)
      implements Plan {

    public KeepNothing {
      Objects.requireNonNull(owned, "owned");
      Objects.requireNonNull(ownWrites, "ownWrites");
    }
  }

  /**
   * Calls the hook and checks its answer whole before anything is written. A kind may call it more than once and
   * combine the answers (a rolling CompositeController calls it once per ControllerRevision), and may write here what
   * must be written before the owned objects (those revisions).
   */
  @FunctionalInterface
  interface Answering {

    /** @param observed the owned objects, as the request carries them */
    Mono<Answer.Checked> answer(HookCall hook, Map<ChildType, List<KubeObject>> observed);

    /** One call with the request as built, its answer checked by {@code check}. */
    static Answering checkedBy(Check check) {
      return new CheckedBy(check);
    }

    /**
     * One call with the request as built, its answer checked by {@code check}: nothing is written while answering,
     * so a shadow hook's answer to the same request can be checked the same way ({@link Shadow}).
     */
    record CheckedBy(Check check) implements Answering {
      public CheckedBy {
        Objects.requireNonNull(check, "check");
      }

      @Override
      public Mono<Answer.Checked> answer(HookCall hook, Map<ChildType, List<KubeObject>> observed) {
        return hook.call()
            .map(reply -> new Answer.Checked(reply.response(), check.check(reply.response(), reply.body())));
      }
    }
  }

  /** Checks a whole answer before anything is written. */
  @FunctionalInterface
  interface Check {

    /** @throws dev.metareactor.engine.hook.HookResponseException naming what is wrong */
    Answer check(SyncResponse response, JsonNode body);
  }
}
