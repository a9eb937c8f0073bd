package dev.metareactor.load;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Informable;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.ReducedStateItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Watches the bench parents and their ConfigMaps and says when the cluster is converged: every parent's status
 * carries the stamp and value of its latest spec (the hook saw that spec and the engine wrote its answer back), and
 * every one of its children holds that value (for a DecoratorController, the parent's label too). A parent that
 * relates to a shared ConfigMap (the fan-out, {@code --related}) is converged when its status and every child also
 * hold that ConfigMap's current value.
 *
 * <p>For a MapController the units are the inputs, not the parents: every input's outputs hold the input's value,
 * and the one parent's status counts every input and every output (the engine counts it; the hook returns none).
 *
 * <p>One watch per resource, as cheap for the API server as one more watcher of what the engine already watches.
 * The informers' caches keep only each object's labels (what a delete needs), and the watch keeps a few strings per
 * object, so that 10,000 parents and 30,000 children fit the driver's small heap. Whether everything is converged is
 * a pass over the in-memory maps every 50 ms, so a phase's time is known to within that; single edits (the latency
 * trickle, a shared ConfigMap's fan-out) are timed as each event arrives instead: the parent the event concerns is
 * checked at once.
 */
final class ConvergenceWatch implements AutoCloseable {

  static final String VALUE_LABEL = "bench.metareactor.dev/value";
  /** The value of {@link Cluster#BENCH_LABEL} on a MapController's inputs. */
  static final String INPUT = "input";
  /** The value of {@link Cluster#BENCH_LABEL} on the shared ConfigMaps parents relate to ({@code --related}). */
  static final String SHARED = "shared";
  private static final long POLL_MILLIS = 50;
  /** How long after the last edit it saw the watch stops waiting for edits it may never see. */
  private static final Duration QUIET_AFTER_EDITS = Duration.ofSeconds(5);

  /**
   * What the watch knows of one unit (a parent, or a map's input).
   *
   * @param value what its children must hold
   * @param stamp the wall-clock time (Unix nanoseconds) of the edit that set {@code value}, 0 if unknown
   * @param shared the shared ConfigMap the parent relates to, or {@code null}
   * @param sharedSeen that ConfigMap's value as the parent's status shows it, or {@code null}
   * @param synced whether its own state is converged (a parent's status and label; always, for an input)
   */
  private record Unit(String value, long stamp, String shared, String sharedSeen,
      boolean synced) {}

  /** What a child holds: its value and, for a parent that relates to a shared ConfigMap, that one's value. */
  private record Child(String value, String shared) {}

  /** A MapController parent's status counts: inputs and outputs (-1: not written yet). */
  private record MapCounts(int inputs, int outputs) {}

  /** How far a converge has come at one moment. */
  record Progress(double seconds, int parentsConverged, int childrenConverged) {}

  /**
   * An edit of shared ConfigMap {@code name} to {@code value} on its way to the parents relating to it
   * ({@code waiting}, until each is seen converged; {@code lastNanos}: when the last one was).
   */
  private static final class FanOut {
    final String name;
    final String value;
    final Set<String> waiting;
    final int parents;
    long lastNanos;

    FanOut(String name, String value, Set<String> waiting) {
      this.name = name;
      this.value = value;
      this.waiting = waiting;
      this.parents = waiting.size();
    }
  }

  private final int children;
  private final ControllerKind kind;
  private final Map<String, Unit> units = new ConcurrentHashMap<>();
  private volatile MapCounts mapCounts = new MapCounts(-1, -1);
  /**
   * The value every unit must hold for the phase to be over, when the phase wrote one value to all (an update
   * wave); {@code null} otherwise. Without it, a check that runs before the watch has seen the edits would find the
   * old values converged.
   */
  private volatile String expected;
  private final Map<String, Child> childValues = new ConcurrentHashMap<>();
  /** The shared ConfigMaps' values, by name. */
  private final Map<String, String> relatedValues = new ConcurrentHashMap<>();
  /** The names of each parent's children, made once: the check runs every 50 ms over every child. */
  private final Map<String, String[]> childNames = new ConcurrentHashMap<>();

  /**
   * One edit timed: its unit (a parent, or a map's input), its stamp (Unix nanoseconds) and the milliseconds from it
   * until the unit was seen converged. The unit and the stamp find the edit's syncs in the engine's own record (its
   * {@code /debug/syncs}) or the API server's audit log when a tail needs explaining.
   */
  record TimedEdit(String unit, long stampNanos, double millis) {
    /** When the edit was made. */
    Instant stamp() {
      return Instant.ofEpochSecond(0, stampNanos);
    }
  }

  // Timing single edits: guarded by `lock` (the two informers deliver events on a thread each).
  private final Object lock = new Object();
  /** Edits stamped from this time on (Unix nanoseconds) are timed; 0: none are. */
  private long timeEditsFrom;
  /** Per unit, the stamps of its edits not yet seen converged. */
  private final Map<String, List<Long>> pendingEdits = new HashMap<>();
  /**
   * Per unit, the stamp of the edit its last event carried, so that a later event of the same edit adds nothing.
   * Not the newest: two edits of one parent made at once may reach the API server in either order.
   */
  private final Map<String, Long> lastStamp = new HashMap<>();
  private final List<TimedEdit> timedEdits = new ArrayList<>();
  /** Edits seen since timing began (each with a stamp of its own), and when the last one was. */
  private int editsSeen;
  private long lastEditSeenNanos;
  private volatile FanOut fanOut;

  private final SharedIndexInformer<GenericKubernetesResource> parentInformer;
  private final SharedIndexInformer<ConfigMap> childInformer;

  ConvergenceWatch(KubernetesClient client, String namespace, int children, ControllerKind kind) {
    this.children = children;
    this.kind = kind;
    KubernetesSerialization serialization = client.getKubernetesSerialization();
    this.parentInformer = inform(client.genericKubernetesResources(Cluster.PARENTS).inNamespace(namespace)
        .withLabel(Cluster.BENCH_LABEL), GenericKubernetesResource.class, serialization,
        handler(this::putParent, this::removeParent));
    // Children, a map's inputs and the shared ConfigMaps alike: one watch, told apart by the label's value.
    this.childInformer = inform(client.configMaps().inNamespace(namespace).withLabel(Cluster.BENCH_LABEL),
        ConfigMap.class, serialization, handler(this::putConfigMap, this::removeConfigMap));
  }

  /**
   * An informer whose cache keeps only the objects' labels (the handlers read every event's whole object), listing
   * in pages: a relist of 30,000 ConfigMaps in one answer would take the driver's heap.
   */
  private static <T extends HasMetadata> SharedIndexInformer<T> inform(Informable<T> resources, Class<T> type,
      KubernetesSerialization serialization, ResourceEventHandler<T> handler) {
    SharedIndexInformer<T> informer = resources.withLimit(500L).runnableInformer(0);
    informer.itemStore(new ReducedStateItemStore<>(ReducedStateItemStore.NAME_KEY_STATE, type, serialization,
        "metadata.labels"));
    informer.addEventHandler(handler);
    informer.start();
    return informer;
  }

  private static <T> ResourceEventHandler<T> handler(Consumer<T> put,
      Consumer<T> remove) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        put.accept(obj);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        put.accept(newObj);
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        remove.accept(obj);
      }
    };
  }

  private void putParent(GenericKubernetesResource parent) {
    Map<String, Object> props = parent.getAdditionalProperties();
    Map<?, ?> spec = props.get("spec") instanceof Map<?, ?> m ? m : Map.of();
    Map<?, ?> status = props.get("status") instanceof Map<?, ?> m ? m : Map.of();
    if (kind == ControllerKind.MAP) {
      mapCounts = new MapCounts(total(status, "inputs"), total(status, "outputs"));
      return;
    }
    Map<String, String> labels = parent.getMetadata().getLabels();
    String value = Objects.toString(spec.get("value"), "");
    String stamp = str(spec.get("stamp"));
    boolean synced = stamp != null && stamp.equals(str(status.get("stamp")))
        && value.equals(str(status.get("value")))
        && (kind != ControllerKind.DECORATOR || Objects.equals(value, labels == null ? null : labels.get(VALUE_LABEL)));
    String name = parent.getMetadata().getName();
    units.put(name, new Unit(value, nanos(stamp), str(spec.get("shared")), str(status.get("shared")), synced));
    changed(name);
  }

  private void removeParent(GenericKubernetesResource parent) {
    if (kind == ControllerKind.MAP) {
      mapCounts = new MapCounts(-1, -1);
    } else {
      units.remove(parent.getMetadata().getName());
    }
  }

  /** {@code status.<counts>.configmaps.total} of a MapController parent, or -1. */
  private static int total(Map<?, ?> status, String counts) {
    Object total = status.get(counts) instanceof Map<?, ?> c && c.get("configmaps") instanceof Map<?, ?> m
        ? m.get("total") : null;
    return total instanceof Number n ? n.intValue() : -1;
  }

  private void putConfigMap(ConfigMap configMap) {
    Map<String, String> data = configMap.getData() == null ? Map.of() : configMap.getData();
    String value = Objects.toString(data.get("value"), "");
    String name = configMap.getMetadata().getName();
    switch (role(configMap)) {
      case INPUT -> {
        units.put(name, new Unit(value, nanos(data.get("stamp")), null, null, true));
        changed(name);
      }
      case SHARED -> {
        relatedValues.put(name, value);
        relatedChanged(name);
      }
      default -> {
        childValues.put(name, new Child(value, data.get("shared")));
        changed(name.substring(0, Math.max(0, name.lastIndexOf('-'))));
      }
    }
  }

  private void removeConfigMap(ConfigMap configMap) {
    String name = configMap.getMetadata().getName();
    switch (role(configMap)) {
      case INPUT -> units.remove(name);
      case SHARED -> relatedValues.remove(name);
      default -> childValues.remove(name);
    }
  }

  /** {@link #INPUT}, {@link #SHARED} or, for a child, {@code true}. */
  private static String role(ConfigMap configMap) {
    Map<String, String> labels = configMap.getMetadata().getLabels();
    return labels == null ? "true" : Objects.toString(labels.get(Cluster.BENCH_LABEL), "true");
  }

  private static String str(Object value) {
    return value == null ? null : value.toString();
  }

  /** A stamp (Unix nanoseconds as a string) as a number; 0 for none. */
  private static long nanos(String stamp) {
    try {
      return stamp == null ? 0 : Long.parseLong(stamp);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The wall clock in Unix nanoseconds, as loadkit stamps its edits. */
  static long wallNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  // ---- timing single edits, as their events arrive

  /**
   * Something about unit {@code name} (it, or one of its children) changed: while edits or a fan-out are timed,
   * note a new edit of it, and whether it is converged now.
   */
  private void changed(String name) {
    synchronized (lock) {
      FanOut fan = fanOut;
      if (timeEditsFrom == 0 && fan == null) {
        return;
      }
      Unit unit = units.get(name);
      if (unit == null) {
        return;
      }
      List<Long> pending = pendingEdits.get(name);
      if (timeEditsFrom != 0 && unit.stamp() >= timeEditsFrom && unit.stamp() != lastStamp.getOrDefault(name, 0L)) {
        lastStamp.put(name, unit.stamp());
        pending = pendingEdits.computeIfAbsent(name, n -> new ArrayList<>());
        pending.add(unit.stamp());
        editsSeen++;
        lastEditSeenNanos = System.nanoTime();
      }
      boolean fanning = fan != null && fan.waiting.contains(name);
      if ((pending == null || pending.isEmpty()) && !fanning || !converged(name, unit)) {
        return;
      }
      if (pending != null && !pending.isEmpty()) {
        // An edit overtaken by a later one of the same parent is shown (overwritten) once that one is.
        long now = wallNanos();
        pending.forEach(stamp -> timedEdits.add(new TimedEdit(name, stamp, (now - stamp) / 1e6)));
        pending.clear();
      }
      if (fanning) {
        fan.waiting.remove(name);
        fan.lastNanos = System.nanoTime();
      }
    }
  }

  /** Shared ConfigMap {@code name} changed: each parent relating to it may have become converged, or not. */
  private void relatedChanged(String name) {
    FanOut fan = fanOut;
    if (fan != null && fan.name.equals(name)) {
      fan.waiting.forEach(this::changed);
    }
  }

  /**
   * Times every edit stamped from {@code fromWallNanos} on, from its stamp until its parent's status and every child
   * show it (or a later edit of the same parent), as the events arrive; 0 stops timing and forgets the times.
   */
  void timeEdits(long fromWallNanos) {
    synchronized (lock) {
      pendingEdits.clear();
      lastStamp.clear();
      timedEdits.clear();
      editsSeen = 0;
      lastEditSeenNanos = System.nanoTime();
      timeEditsFrom = fromWallNanos;
    }
  }

  /**
   * Ends timing edits once every edit seen is seen converged and either {@code edits} of them have been seen or
   * none for {@link #QUIET_AFTER_EDITS} (a watch that had to list again sees only the last edit of a parent), and
   * returns them, the fastest first. The watch may not have seen the last edits yet when every parent it
   * knows looks converged: hence the count.
   *
   * @throws IllegalStateException when that does not happen within {@code timeout}
   */
  List<TimedEdit> editLatencies(int edits, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (true) {
        synchronized (lock) {
          long pending = pendingEdits.values().stream().mapToLong(List::size).sum();
          boolean allSeen = editsSeen >= edits
              || System.nanoTime() - lastEditSeenNanos > QUIET_AFTER_EDITS.toNanos();
          if (allSeen && pending == 0) {
            List<TimedEdit> sorted = new ArrayList<>(timedEdits);
            sorted.sort(Comparator.comparingDouble(TimedEdit::millis));
            return sorted;
          }
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("of " + edits + " edits the watch saw " + editsSeen + ", " + pending
                + " of them not converged after " + timeout);
          }
        }
        TimeUnit.MILLISECONDS.sleep(5);
      }
    } finally {
      synchronized (lock) {
        timeEditsFrom = 0;
        pendingEdits.clear();
        lastStamp.clear();
        timedEdits.clear();
      }
    }
  }

  /**
   * Expects shared ConfigMap {@code name} to be edited to {@code value} next: from now on the parents relating to it
   * are converged only once they show that value.
   *
   * @return how many parents relate to it
   */
  int expectRelated(String name, String value) {
    Set<String> waiting = ConcurrentHashMap.newKeySet();
    units.forEach((unit, state) -> {
      if (name.equals(state.shared())) {
        waiting.add(unit);
      }
    });
    synchronized (lock) {
      fanOut = new FanOut(name, value, waiting);
    }
    return waiting.size();
  }

  /**
   * Waits until every parent relating to the shared ConfigMap of {@link #expectRelated} shows its new value.
   *
   * @param sinceNanos when the edit was made ({@link System#nanoTime})
   * @return seconds from {@code sinceNanos} until the last of those parents was seen converged
   */
  double awaitRelated(long sinceNanos, Duration timeout, BooleanSupplier stillRunning) throws InterruptedException {
    FanOut fan = Objects.requireNonNull(fanOut, "expectRelated first");
    try {
      long deadline = sinceNanos + timeout.toNanos();
      while (!fan.waiting.isEmpty()) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("an edit of " + fan.name + " did not reach " + fan.waiting.size() + " of its "
              + fan.parents + " parents within " + timeout);
        }
        if (!stillRunning.getAsBoolean()) {
          throw new IllegalStateException("the engine exited before an edit of " + fan.name + " reached its parents");
        }
        TimeUnit.MILLISECONDS.sleep(5);
      }
      synchronized (lock) {
        return (fan.lastNanos - sinceNanos) / 1e9;
      }
    } finally {
      synchronized (lock) {
        fanOut = null;
      }
    }
  }

  /** Waits until the initial lists are in. */
  void awaitSynced(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!(parentInformer.hasSynced() && childInformer.hasSynced())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the convergence watch did not sync within " + timeout);
      }
      TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
    }
  }

  /** From now on a unit is converged only when it holds {@code value} ({@code null}: whatever it holds). */
  void expect(String value) {
    expected = value;
  }

  /** Parents seen, or inputs for a MapController. */
  int parentsSeen() {
    return units.size();
  }

  int childrenSeen() {
    return childValues.size();
  }

  /** Shared ConfigMaps seen. */
  int relatedSeen() {
    return relatedValues.size();
  }

  Progress progress(long sinceNanos) {
    int parentsDone = 0;
    int childrenDone = 0;
    for (Map.Entry<String, Unit> entry : units.entrySet()) {
      Unit unit = entry.getValue();
      String sharedValue = unit.shared() == null ? null : relatedValues.get(unit.shared());
      int good = goodChildren(entry.getKey(), unit, sharedValue);
      childrenDone += good;
      if (good == children && settled(unit, sharedValue)) {
        parentsDone++;
      }
    }
    return new Progress((System.nanoTime() - sinceNanos) / 1e9, parentsDone, childrenDone);
  }

  private boolean converged(String name, Unit unit) {
    String sharedValue = unit.shared() == null ? null : relatedValues.get(unit.shared());
    return settled(unit, sharedValue) && goodChildren(name, unit, sharedValue) == children;
  }

  /**
   * Whether a unit's own state is converged: its status (and label), the value the phase expects, and the value of
   * the shared ConfigMap it relates to (the one a fan-out expects, once the watch has seen it).
   */
  private boolean settled(Unit unit, String sharedValue) {
    if (!unit.synced() || expected != null && !expected.equals(unit.value())) {
      return false;
    }
    if (unit.shared() == null) {
      return true;
    }
    FanOut fan = fanOut;
    return sharedValue != null && sharedValue.equals(unit.sharedSeen())
        && (fan == null || !fan.name.equals(unit.shared()) || fan.value.equals(sharedValue));
  }

  /** How many of a unit's children hold its value (and the shared ConfigMap's value, or none). */
  private int goodChildren(String name, Unit unit, String sharedValue) {
    int good = 0;
    for (String child : childNames.computeIfAbsent(name, this::namesOfChildren)) {
      Child state = childValues.get(child);
      if (state != null && state.value().equals(unit.value()) && Objects.equals(state.shared(), sharedValue)) {
        good++;
      }
    }
    return good;
  }

  private String[] namesOfChildren(String parent) {
    String[] names = new String[children];
    for (int i = 0; i < children; i++) {
      names[i] = parent + "-" + i;
    }
    return names;
  }

  /**
   * Waits until all {@code parentCount} parents (or a map's inputs) are converged, and for a MapController until
   * its parent's status counts them all and their outputs.
   *
   * @param sinceNanos when the phase began ({@link System#nanoTime})
   * @param samples receives the progress every 250 ms, for the chart
   * @param stillRunning checked at each poll: a dead engine ends the wait early
   * @return seconds from {@code sinceNanos} to convergence
   */
  double awaitConverged(int parentCount, long sinceNanos, Duration timeout, List<Progress> samples,
      BooleanSupplier stillRunning) throws InterruptedException {
    long deadline = sinceNanos + timeout.toNanos();
    long nextSample = 0;
    while (true) {
      long now = System.nanoTime();
      Progress progress = progress(sinceNanos);
      if (samples != null && now >= nextSample) {
        samples.add(progress);
        nextSample = now + TimeUnit.MILLISECONDS.toNanos(250);
      }
      if (progress.parentsConverged() >= parentCount && units.size() >= parentCount && counted(parentCount)) {
        if (samples != null) {
          samples.add(progress);
        }
        return progress.seconds();
      }
      if (now > deadline) {
        throw new IllegalStateException("not converged after " + timeout + ": " + progress.parentsConverged() + "/"
            + parentCount + " " + kind.units() + ", " + progress.childrenConverged() + "/" + parentCount * children
            + " children" + (kind == ControllerKind.MAP ? ", parent's status " + mapCounts : ""));
      }
      if (!stillRunning.getAsBoolean()) {
        throw new IllegalStateException("the engine exited before convergence: " + progress.parentsConverged() + "/"
            + parentCount + " " + kind.units());
      }
      TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
    }
  }

  /** Whether a MapController parent's status counts {@code inputs} inputs and their outputs (others: always). */
  private boolean counted(int inputs) {
    MapCounts counts = mapCounts;
    return kind != ControllerKind.MAP || counts.inputs() == inputs && counts.outputs() == inputs * children;
  }

  static List<Progress> newSamples() {
    return new ArrayList<>();
  }

  @Override
  public void close() {
    parentInformer.stop();
    childInformer.stop();
  }
}
