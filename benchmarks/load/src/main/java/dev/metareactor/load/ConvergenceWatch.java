package dev.metareactor.load;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Watches the bench parents and their ConfigMaps and says when the cluster is converged: every parent's status
 * carries the stamp and value of its latest spec (the hook saw that spec and the engine wrote its answer back), and
 * every one of its children holds that value (for a DecoratorController, the parent's label too).
 *
 * <p>For a MapController the units are the inputs, not the parents: every input's outputs hold the input's value,
 * and the one parent's status counts every input and every output (the engine counts it; the hook returns none).
 *
 * <p>One watch per resource, as cheap for the API server as one more watcher of what the engine already watches;
 * the check itself is a pass over two in-memory maps every 50 ms, so a converge time is known to within that.
 */
final class ConvergenceWatch implements AutoCloseable {

  static final String VALUE_LABEL = "bench.metareactor.dev/value";
  /** The value of {@link Cluster#BENCH_LABEL} on a MapController's inputs. */
  static final String INPUT = "input";
  private static final long POLL_MILLIS = 50;

  /**
   * What the watch knows of one unit (a parent, or a map's input): the value its children must hold, and whether
   * its own state is converged (a parent's status and label; always, for an input).
   */
  private record Unit(String value, boolean synced) {}

  /** A MapController parent's status counts: inputs and outputs (-1: not written yet). */
  private record MapCounts(int inputs, int outputs) {}

  /** How far a converge has come at one moment. */
  record Progress(double seconds, int parentsConverged, int childrenConverged) {}

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
  private final Map<String, String> childValues = new ConcurrentHashMap<>();
  /** The names of each parent's children, made once: the check runs every 50 ms over every child. */
  private final Map<String, String[]> childNames = new ConcurrentHashMap<>();
  private final SharedIndexInformer<GenericKubernetesResource> parentInformer;
  private final SharedIndexInformer<ConfigMap> childInformer;

  ConvergenceWatch(KubernetesClient client, String namespace, int children, ControllerKind kind) {
    this.children = children;
    this.kind = kind;
    this.parentInformer = client.genericKubernetesResources(Cluster.PARENTS).inNamespace(namespace)
        .withLabel(Cluster.BENCH_LABEL).inform(handler(this::putParent, this::removeParent), 0);
    // Children and a map's inputs alike: one watch, told apart by the label's value.
    this.childInformer = client.configMaps().inNamespace(namespace).withLabel(Cluster.BENCH_LABEL)
        .inform(handler(this::putConfigMap, this::removeConfigMap), 0);
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
    String value = str(spec.get("value"));
    String stamp = str(spec.get("stamp"));
    boolean synced = stamp != null && stamp.equals(str(status.get("stamp")))
        && Objects.equals(value, str(status.get("value")))
        && (kind != ControllerKind.DECORATOR || Objects.equals(value, labels == null ? null : labels.get(VALUE_LABEL)));
    units.put(parent.getMetadata().getName(), new Unit(value, synced));
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
    Map<String, String> data = configMap.getData();
    String value = data == null ? "" : Objects.toString(data.get("value"), "");
    if (isInput(configMap)) {
      units.put(configMap.getMetadata().getName(), new Unit(value, true));
    } else {
      childValues.put(configMap.getMetadata().getName(), value);
    }
  }

  private void removeConfigMap(ConfigMap configMap) {
    (isInput(configMap) ? units : childValues).remove(configMap.getMetadata().getName());
  }

  private static boolean isInput(ConfigMap configMap) {
    return INPUT.equals(configMap.getMetadata().getLabels().get(Cluster.BENCH_LABEL));
  }

  private static String str(Object value) {
    return value == null ? null : value.toString();
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

  Progress progress(long sinceNanos) {
    int parentsDone = 0;
    int childrenDone = 0;
    for (Map.Entry<String, Unit> entry : units.entrySet()) {
      Unit unit = entry.getValue();
      int good = 0;
      for (String child : childNames.computeIfAbsent(entry.getKey(), this::namesOfChildren)) {
        if (Objects.equals(childValues.get(child), unit.value())) {
          good++;
        }
      }
      childrenDone += good;
      if (good == children && unit.synced() && (expected == null || expected.equals(unit.value()))) {
        parentsDone++;
      }
    }
    return new Progress((System.nanoTime() - sinceNanos) / 1e9, parentsDone, childrenDone);
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
