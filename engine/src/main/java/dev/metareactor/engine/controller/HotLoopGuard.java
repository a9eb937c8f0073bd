package dev.metareactor.engine.controller;

import com.github.benmanes.caffeine.cache.Cache;
import dev.metareactor.apply.DynamicApply;
import dev.metareactor.apply.JsonEquality;
import dev.metareactor.engine.config.Caches;
import dev.metareactor.engine.config.HotLoopSettings;
import dev.metareactor.engine.events.EventRecorder;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.MissingNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Tells a parent whose syncs go round in a loop from one that makes progress, and holds the loop back
 * (Metacontroller's issue #1003: endless hook calls when an attachment comes back unchanged).
 *
 * <p>A loop is the same write made again and again: a child's field written to the same value that the API server
 * keeps otherwise ({@code cpu: 1000m} stored as {@code 1}, a defaulted field dropped), or that another writer changes
 * back; a child created again that someone keeps deleting, or deleted again that someone keeps creating. Each sync
 * tells the guard what it wrote ({@link #synced}), as a {@link Write} whose fingerprint covers the object, the verb,
 * the fields it changes and the values it gives them. When one write has been made {@link HotLoopSettings#repeats}
 * times within {@link HotLoopSettings#window}, the parent gets a Warning {@code HotLoop} Event naming the object and
 * the fields, a log line says the same, {@code metareactor_hot_loops_total} counts it, and the parent's syncs are
 * held back ({@link #held}): {@link HotLoopSettings#firstHold} the first time, doubling each time the loop is found
 * again, at most {@link HotLoopSettings#maxHold}. Progress never repeats a write (a rolling update writes each child
 * once per revision, a status counter moves), and a sync that writes nothing is not a loop: the first sync that makes
 * no write, or only writes not made before, ends the loop; a change of the parent's spec lifts the hold
 * ({@link #release}).
 *
 * <p>Memory is bounded per parent: {@value #SLOTS} fingerprints with their counts and no bodies (a write whose slot
 * another one takes starts counting again); a parent is forgotten when it goes ({@link #forget}), when a sync of it
 * writes nothing, or when it wrote nothing for the window plus the longest hold. Thread-safe: one guard serves all
 * syncs of a controller.
 */
public final class HotLoopGuard {

  private static final Logger LOG = LoggerFactory.getLogger(HotLoopGuard.class);
  /** Fingerprints kept per parent: more than one sync of nearly any parent writes. */
  static final int SLOTS = 32;
  private static final int MAX_PARENTS = 100_000;
  /** Fields named per write: enough to find the one that will not stick. */
  private static final int MAX_FIELDS = 3;

  /**
   * One write of a sync.
   *
   * @param verb {@code create}, {@code update} or {@code delete}
   * @param object {@code <Kind> <namespace>/<name>}
   * @param fields the fields the write changes ({@code spec.limits[0].max.cpu}), or empty when it is the whole
   *     object (a create, a delete)
   * @param fingerprint the object, the verb, the fields and the values written to them
   */
  public record Write(String verb, String object, List<String> fields, long fingerprint) {

    public Write {
      Objects.requireNonNull(verb, "verb");
      Objects.requireNonNull(object, "object");
      fields = List.copyOf(fields);
    }

    /** A create of {@code desired}. */
    public static Write create(ApiResource resource, String namespace, String name, JsonNode desired) {
      String object = describe(resource, namespace, name);
      return new Write("create", object, List.of(), mix(mix(seed("create", object), desired.hashCode()), 0));
    }

    /** A delete. */
    public static Write delete(ApiResource resource, String namespace, String name) {
      String object = describe(resource, namespace, name);
      return new Write("delete", object, List.of(), seed("delete", object));
    }

    /**
     * An update of {@code current} to {@code desired}: the fields of {@code desired} whose values {@code current}
     * does not have (metadata the API server keeps and {@code status} aside), with those values.
     */
    public static Write update(ApiResource resource, KubeObject current, JsonNode desired) {
      String object = describe(resource, current.namespace(), current.name());
      List<String> fields = new ArrayList<>();
      long fingerprint = differences("", current.toTree(), desired, fields, seed("update", object));
      return new Write("update", object, fields.size() > MAX_FIELDS ? fields.subList(0, MAX_FIELDS) : fields,
          fingerprint);
    }

    /** {@code <verb> <object>}, with the fields it changes. */
    String describe() {
      return verb + " of " + object + (fields.isEmpty() ? "" : " field " + String.join(", ", fields));
    }

    private static String describe(ApiResource resource, String namespace, String name) {
      return resource.kind() + " " + KubeObject.namespacedName(namespace, name);
    }
  }

  /**
   * A parent found in a loop.
   *
   * @param write the write it keeps making
   * @param times how many times it made it within the window
   * @param hold how long its syncs are held back now
   */
  public record HotLoop(Write write, int times, Duration window, Duration hold) {

    /** The Event's message: the same for every hold of the same loop, so that the Events aggregate. */
    String message() {
      String what = write.describe();
      return "the same " + what + " was made " + times + " times within " + window.toSeconds() + " s: the value "
          + "written does not stick (the API server keeps it otherwise, or another writer changes it back); "
          + "syncs of this parent back off until it does";
    }
  }

  /** What one sync wrote, and what it created for {@link WrittenChildren} to remember. */
  public static final class Writes implements WrittenChildren.Recorder {

    private final WrittenChildren.Recorder created;
    private final List<Write> writes = new CopyOnWriteArrayList<>();

    /** @param created where the creates also go */
    public Writes(WrittenChildren.Recorder created) {
      this.created = Objects.requireNonNull(created, "created");
    }

    @Override
    public void created(ApiResource resource, KubeObject object) {
      created.created(resource, object);
    }

    @Override
    public void wrote(Write write) {
      writes.add(write);
    }

    /** The writes so far. */
    public List<Write> list() {
      return List.copyOf(writes);
    }
  }

  /** One parent's recent writes and hold; guarded by itself. */
  private static final class Parent {
    final long[] fingerprints = new long[SLOTS];
    final int[] counts = new int[SLOTS];
    final long[] firstAt = new long[SLOTS];
    /** How many times in a row the loop was found: the hold doubles with each. */
    int found;
    long heldUntil;
    boolean held;
  }

  private final HotLoopSettings settings;
  private final ParentEvents events;
  private final Runnable counted;
  private final LongSupplier nanoClock;
  private final Cache<Object, Parent> parents;

  /** Off: never finds a loop, never holds a parent. */
  public static HotLoopGuard off() {
    return new HotLoopGuard(HotLoopSettings.OFF, (object, type, reason, message) -> { }, () -> { });
  }

  /**
   * @param events where a parent's {@code HotLoop} Warning goes
   * @param counted told of each loop found ({@code metareactor_hot_loops_total})
   */
  public HotLoopGuard(HotLoopSettings settings, ParentEvents events, Runnable counted) {
    this(settings, events, counted, System::nanoTime);
  }

  HotLoopGuard(HotLoopSettings settings, ParentEvents events, Runnable counted, LongSupplier nanoClock) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.events = Objects.requireNonNull(events, "events");
    this.counted = Objects.requireNonNull(counted, "counted");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.parents = Caches.newBuilder().maximumSize(MAX_PARENTS)
        .expireAfterAccess(settings.window().plus(settings.maxHold())).build();
  }

  /**
   * How long the syncs of the parent of {@code key} are still held back, or empty when they are not: a sync asked
   * for meanwhile (a child's change, a resync) is put off by that much, without a hook call.
   */
  public Optional<Duration> held(Object key) {
    Parent parent = parents.getIfPresent(key);
    if (parent == null) {
      return Optional.empty();
    }
    synchronized (parent) {
      long left = parent.heldUntil - nanoClock.getAsLong();
      return parent.held && left > 0 ? Optional.of(Duration.ofNanos(left)) : Optional.empty();
    }
  }

  /**
   * What one sync of the parent {@code object}, of {@code key}, wrote; when one of the writes makes a loop, the
   * parent is held back and reported.
   *
   * @return the loop found, if any
   */
  public Optional<HotLoop> synced(Object key, KubeObject object, List<Write> writes) {
    if (!settings.on()) {
      return Optional.empty();
    }
    if (writes.isEmpty()) {
      parents.invalidate(key); // converged: whatever went round has stopped
      return Optional.empty();
    }
    Parent parent = parents.get(key, k -> new Parent());
    HotLoop loop = null;
    synchronized (parent) {
      long now = nanoClock.getAsLong();
      long window = settings.window().toNanos();
      boolean repeated = false;
      for (Write write : writes) {
        int slot = (int) Math.floorMod(write.fingerprint() ^ (write.fingerprint() >>> 32), (long) SLOTS);
        if (parent.counts[slot] > 0 && parent.fingerprints[slot] == write.fingerprint()
            && now - parent.firstAt[slot] <= window) {
          parent.counts[slot]++;
          repeated = true;
        } else {
          parent.fingerprints[slot] = write.fingerprint();
          parent.counts[slot] = 1;
          parent.firstAt[slot] = now;
        }
        if (parent.counts[slot] >= settings.repeats() && loop == null) {
          Duration hold = hold(parent.found++);
          parent.heldUntil = now + hold.toNanos();
          parent.held = true;
          loop = new HotLoop(write, parent.counts[slot], settings.window(), hold);
          // Counted from the end of the hold, one short: the same write within the window after it is the loop
          // again, and the next hold doubles. (From the first write, a hold longer than the window would forget it.)
          parent.counts[slot] = settings.repeats() - 1;
          parent.firstAt[slot] = parent.heldUntil;
        }
      }
      if (!repeated) {
        // Every write new: progress, or a loop that has stopped.
        parent.found = 0;
        parent.held = false;
      }
    }
    if (loop != null) {
      report(object, loop);
    }
    return Optional.ofNullable(loop);
  }

  /**
   * The parent of {@code key} itself changed (its spec, or a sync was asked for): what it did before is no loop
   * of what it does now.
   */
  public void release(Object key) {
    parents.invalidate(key);
  }

  /** The parent of {@code key} is gone. */
  public void forget(Object key) {
    parents.invalidate(key);
  }

  /** The hold after the loop was found {@code before} times in a row already: doubling, bounded. */
  private Duration hold(int before) {
    Duration hold = settings.firstHold().multipliedBy(1L << Math.min(before, 30));
    return hold.compareTo(settings.maxHold()) > 0 || hold.isNegative() ? settings.maxHold() : hold;
  }

  private void report(KubeObject object, HotLoop loop) {
    LOG.warn("{}: hot loop: {}; its syncs are held back {} ms", object.describe(), loop.message(),
        loop.hold().toMillis());
    events.record(object, EventRecorder.Type.Warning, "HotLoop", loop.message());
    counted.run();
  }

  private static long seed(String verb, String object) {
    return mix(mix(0xcbf29ce484222325L, verb.hashCode()), object.hashCode());
  }

  private static long mix(long hash, long value) {
    long h = (hash ^ value) * 0x100000001b3L;
    return h ^ (h >>> 29);
  }

  /**
   * Adds to {@code fields} the paths under {@code path} where {@code desired} has a value {@code current} does not,
   * and returns {@code hash} mixed with each of them and its desired value.
   */
  private static long differences(String path, JsonNode current, JsonNode desired, List<String> fields,
      long hash) {
    if (desired instanceof ObjectNode wanted && current instanceof ObjectNode present) {
      long mixed = hash;
      for (Map.Entry<String, JsonNode> field : wanted.properties()) {
        String name = field.getKey();
        if (ignored(path, name)) {
          continue;
        }
        JsonNode now = present.get(name);
        mixed = differences(path.isEmpty() ? name : path + "." + name, now == null ? MissingNode.getInstance() : now,
            field.getValue(), fields, mixed);
      }
      return mixed;
    }
    if (desired instanceof ArrayNode wanted && current instanceof ArrayNode present
        && wanted.size() == present.size()) {
      long mixed = hash;
      for (int i = 0; i < wanted.size(); i++) {
        mixed = differences(path + "[" + i + "]", present.get(i), wanted.get(i), fields, mixed);
      }
      return mixed;
    }
    if (JsonEquality.equal(current.isMissingNode() ? null : current, desired)) {
      return hash;
    }
    fields.add(path);
    return mix(mix(hash, path.hashCode()), desired.hashCode());
  }

  /** What a write of a child never decides: {@code status}, and the metadata the API server keeps. */
  private static boolean ignored(String path, String name) {
    return (path.isEmpty() && name.equals("status"))
        || (path.equals("metadata") && (DynamicApply.SYSTEM_METADATA_FIELDS.contains(name)
            || name.equals("managedFields")));
  }
}
