package dev.metareactor.engine.queue;

import java.util.Objects;

/**
 * Why a key was added to a {@link KeyedWorkQueue}: one cause, and for a cause about another object (a child, a
 * related object, a map input, an echo) which object and how it changed. Small and allocation-light on purpose:
 * routers make one per event from strings the object already holds, and the causes that name no object are shared
 * constants ({@link #of}).
 *
 * @param cause what happened
 * @param change how the named object changed, {@link Change#NONE} when the cause names no object
 * @param kind the named object's kind, {@code ""} when the cause names none (it is then the key's own object)
 * @param namespace the named object's namespace, {@code ""} when cluster-scoped or none is named
 * @param name the named object's name, {@code ""} when none is named
 */
public record Trigger(Cause cause, Change change, String kind, String namespace, String name) {

  /** Which of the queue's two lanes a cause waits in (see {@link KeyedWorkQueue}, "Priority"). */
  public enum Lane {
    /** Someone changed something: served first. */
    FRESH,
    /** Periodic work, retries and the engine's own echoes: served when the fresh lane is empty, and never starved. */
    BACKGROUND
  }

  /** The kinds of cause, each with its lane. */
  public enum Cause {
    /** The key's object appeared after the engine started. */
    CREATED(Lane.FRESH, "created"),
    /** The key's object's spec changed (its generation). */
    SPEC(Lane.FRESH, "spec changed"),
    /** The key's object's labels, annotations, finalizers or deletion changed. */
    METADATA(Lane.FRESH, "metadata changed"),
    /** The key's object's {@code metacontroller.k8s.io/sync-requested-at} annotation changed: a sync was asked for. */
    SYNC_REQUESTED(Lane.FRESH, "sync requested (sync-requested-at)"),
    /** The key's object was deleted. */
    DELETED(Lane.FRESH, "deleted"),
    /** Only the key's object's status changed: nearly always the engine's own status write coming back. */
    STATUS(Lane.BACKGROUND, "status changed"),
    /** A child or attachment (an output of a MapController) changed. */
    CHILD(Lane.FRESH, "child changed"),
    /** An object the customize hook relates to the key's object changed. */
    RELATED(Lane.FRESH, "related object changed"),
    /** A MapController's input changed. */
    MAP_INPUT(Lane.FRESH, "input changed"),
    /**
     * The informer event of an object the engine itself just wrote for the key's object (a child it created or
     * updated, the object's own status): the key must still run once so that the hook sees it, but nothing new
     * happened. Deferred
     * ({@link KeyedWorkQueue#ECHO_WINDOW}) so that the echoes of one sync's writes make one run.
     */
    ECHO(Lane.BACKGROUND, "own write came back"),
    /** The controller's {@code resyncPeriodSeconds}. */
    RESYNC_PERIOD(Lane.BACKGROUND, "resync period"),
    /** The last run asked for it ({@code resyncAfterSeconds}). */
    RESYNC_AFTER(Lane.BACKGROUND, "resyncAfterSeconds"),
    /** The informer replayed its cache ({@code --cache-flush-interval}). */
    CACHE_FLUSH(Lane.BACKGROUND, "cache flush"),
    /** The last run failed: retried after its backoff. */
    RETRY_FAILED(Lane.BACKGROUND, "retry after an error"),
    /** The last run was told to come back later (a hook's 429 with {@code Retry-After}, a handover). */
    RETRY_LATER(Lane.BACKGROUND, "retry when asked (Retry-After)"),
    /** The last run was cancelled before it finished. */
    RETRY_CANCELLED(Lane.BACKGROUND, "retry of a cancelled run"),
    /**
     * The key's object moved to this replica's shard ({@code --sharding}): it appeared in this replica's caches
     * with the annotation its mover writes ({@link dev.metareactor.engine.shard.Handover}).
     */
    SHARD_MOVE(Lane.BACKGROUND, "moved to this shard"),
    /**
     * The shards changed ({@code --sharding}: a replica joined or left) and the key's object belongs to another one
     * now: synced to be moved there.
     */
    SHARD_LEAVING(Lane.BACKGROUND, "moving to another shard"),
    /** The engine (or the controller) started: the initial list of its caches. */
    START(Lane.BACKGROUND, "controller started");

    private final Lane lane;
    private final String text;
    private final Trigger alone;

    Cause(Lane lane, String text) {
      this.lane = lane;
      this.text = text;
      this.alone = new Trigger(this, Change.NONE, "", "", "");
    }

    public Lane lane() {
      return lane;
    }

    /** Whether an add for this cause waits {@link KeyedWorkQueue#ECHO_WINDOW} before it counts. */
    public boolean deferred() {
      return this == ECHO;
    }

    /** What it means, in a few words. */
    public String text() {
      return text;
    }
  }

  /** How a named object changed. */
  public enum Change {
    NONE,
    CREATED,
    UPDATED,
    DELETED
  }

  public Trigger {
    Objects.requireNonNull(cause, "cause");
    Objects.requireNonNull(change, "change");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  /** The shared trigger of a cause that names no object: nothing is allocated. */
  public static Trigger of(Cause cause) {
    return cause.alone;
  }

  /** A cause about another object: which one and how it changed. */
  public static Trigger about(Cause cause, Change change, String kind, String namespace, String name) {
    return new Trigger(cause, change, kind, namespace, name);
  }

  public Lane lane() {
    return cause.lane();
  }

  /** Readable: {@code child changed: ConfigMap default/x-0 (created)}, or the cause's text alone. */
  @Override
  public String toString() {
    if (kind.isEmpty() && name.isEmpty()) {
      return cause.text();
    }
    String object = kind + " " + (namespace.isEmpty() ? name : namespace + "/" + name);
    return cause.text() + ": " + object + (change == Change.NONE ? "" : " (" + change.name().toLowerCase() + ")");
  }
}
