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

/**
 * Watches the bench parents and their ConfigMaps and says when the cluster is converged: every parent's status
 * carries the stamp and value of its latest spec (the hook saw that spec and the engine wrote its answer back), and
 * every one of its children holds that value (for a DecoratorController, the parent's label too).
 *
 * <p>One watch per resource, as cheap for the API server as one more watcher of what the engine already watches;
 * the check itself is a pass over two in-memory maps every 50 ms, so a converge time is known to within that.
 */
final class ConvergenceWatch implements AutoCloseable {

  static final String VALUE_LABEL = "bench.metareactor.dev/value";
  private static final long POLL_MILLIS = 50;

  /** What the watch knows of one parent. */
  private record ParentState(String value, String stamp, String statusValue, String statusStamp, String label) {}

  /** How far a converge has come at one moment. */
  record Progress(double seconds, int parentsConverged, int childrenConverged) {}

  private final int children;
  private final boolean decorator;
  private final Map<String, ParentState> parents = new ConcurrentHashMap<>();
  private final Map<String, String> childValues = new ConcurrentHashMap<>();
  /** The names of each parent's children, made once: the check runs every 50 ms over every child. */
  private final Map<String, String[]> childNames = new ConcurrentHashMap<>();
  private final SharedIndexInformer<GenericKubernetesResource> parentInformer;
  private final SharedIndexInformer<ConfigMap> childInformer;

  ConvergenceWatch(KubernetesClient client, String namespace, int children, boolean decorator) {
    this.children = children;
    this.decorator = decorator;
    this.parentInformer = client.genericKubernetesResources(Cluster.PARENTS).inNamespace(namespace)
        .withLabel(Cluster.BENCH_LABEL).inform(handler(this::putParent,
            p -> parents.remove(p.getMetadata().getName())), 0);
    this.childInformer = client.configMaps().inNamespace(namespace).withLabel(Cluster.BENCH_LABEL, "true")
        .inform(handler(this::putChild, c -> childValues.remove(c.getMetadata().getName())), 0);
  }

  private static <T> ResourceEventHandler<T> handler(java.util.function.Consumer<T> put,
      java.util.function.Consumer<T> remove) {
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
    Map<String, String> labels = parent.getMetadata().getLabels();
    parents.put(parent.getMetadata().getName(), new ParentState(str(spec.get("value")), str(spec.get("stamp")),
        str(status.get("value")), str(status.get("stamp")), labels == null ? null : labels.get(VALUE_LABEL)));
  }

  private void putChild(ConfigMap child) {
    Map<String, String> data = child.getData();
    childValues.put(child.getMetadata().getName(), data == null ? "" : Objects.toString(data.get("value"), ""));
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

  int parentsSeen() {
    return parents.size();
  }

  int childrenSeen() {
    return childValues.size();
  }

  Progress progress(long sinceNanos) {
    int parentsDone = 0;
    int childrenDone = 0;
    for (Map.Entry<String, ParentState> entry : parents.entrySet()) {
      ParentState p = entry.getValue();
      int good = 0;
      for (String child : childNames.computeIfAbsent(entry.getKey(), this::namesOfChildren)) {
        if (Objects.equals(childValues.get(child), p.value())) {
          good++;
        }
      }
      childrenDone += good;
      if (good == children && p.stamp() != null && p.stamp().equals(p.statusStamp())
          && Objects.equals(p.value(), p.statusValue()) && (!decorator || Objects.equals(p.value(), p.label()))) {
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
   * Waits until all {@code parentCount} parents are converged.
   *
   * @param sinceNanos when the phase began ({@link System#nanoTime})
   * @param samples receives the progress every 250 ms, for the chart
   * @param stillRunning checked at each poll: a dead engine ends the wait early
   * @return seconds from {@code sinceNanos} to convergence
   */
  double awaitConverged(int parentCount, long sinceNanos, Duration timeout, List<Progress> samples,
      java.util.function.BooleanSupplier stillRunning) throws InterruptedException {
    long deadline = sinceNanos + timeout.toNanos();
    long nextSample = 0;
    while (true) {
      long now = System.nanoTime();
      Progress progress = progress(sinceNanos);
      if (samples != null && now >= nextSample) {
        samples.add(progress);
        nextSample = now + TimeUnit.MILLISECONDS.toNanos(250);
      }
      if (progress.parentsConverged() >= parentCount && parents.size() >= parentCount) {
        if (samples != null) {
          samples.add(progress);
        }
        return progress.seconds();
      }
      if (now > deadline) {
        throw new IllegalStateException("not converged after " + timeout + ": " + progress.parentsConverged() + "/"
            + parentCount + " parents, " + progress.childrenConverged() + "/" + parentCount * children + " children");
      }
      if (!stillRunning.getAsBoolean()) {
        throw new IllegalStateException("the engine exited before convergence: " + progress.parentsConverged() + "/"
            + parentCount + " parents");
      }
      TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
    }
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
