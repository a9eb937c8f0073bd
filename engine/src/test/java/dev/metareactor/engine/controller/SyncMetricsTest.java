package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** controller-runtime's reconcile meters, counted per result and removed with the controller. */
class SyncMetricsTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private double reconciles(String result) {
    return registry.get("controller_runtime.reconcile").tag("controller", "web").tag("result", result).counter()
        .count();
  }

  @Test
  void eachSyncIsCountedByResultTimedAndBusyWhileItRuns() {
    SyncMetrics metrics = new SyncMetrics(registry, "web", 3);
    long first = metrics.started();
    long second = metrics.started();
    assertThat(registry.get("controller_runtime.active.workers").gauge().value()).isEqualTo(2);
    assertThat(registry.get("controller_runtime.max.concurrent.reconciles").gauge().value()).isEqualTo(3);

    metrics.ended(first, SyncMetrics.Result.SUCCESS);
    metrics.ended(second, SyncMetrics.Result.ERROR);
    metrics.ended(metrics.started(), SyncMetrics.Result.REQUEUE_AFTER);

    assertThat(reconciles("success")).isEqualTo(1);
    assertThat(reconciles("error")).isEqualTo(1);
    assertThat(reconciles("requeue_after")).isEqualTo(1);
    assertThat(reconciles("requeue")).isZero();
    assertThat(registry.get("controller_runtime.reconcile.errors").counter().count()).isEqualTo(1);
    assertThat(registry.get("controller_runtime.reconcile.time").timer().count()).isEqualTo(3);
    assertThat(registry.get("controller_runtime.active.workers").gauge().value()).isZero();

    metrics.close();
    assertThat(registry.getMeters()).as("meters left once the controller stopped").isEmpty();
  }

  @Test
  void conflictsOverDesiredChildrenAreCountedByResourceAndHolderAndRemovedWithTheController() {
    SyncMetrics metrics = new SyncMetrics(registry, "web", 1);
    ApiResource configMaps = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());
    ApiResource widgets = new ApiResource("example.com", "v1", "widgets", "Widget", true, Set.of());

    metrics.counted(configMaps, ChildrenManager.Holder.NONE);
    metrics.counted(configMaps, ChildrenManager.Holder.NONE);
    metrics.counted(widgets, ChildrenManager.Holder.THIS_PARENT);

    assertThat(registry.get(MetricCatalogue.CHILD_CONFLICTS.name()).tag("controller", "web")
        .tag("resource", "configmaps").tag("holder", "none").counter().count()).isEqualTo(2);
    assertThat(registry.get(MetricCatalogue.CHILD_CONFLICTS.name()).tag("resource", "widgets.example.com")
        .tag("holder", "this-parent").counter().count()).isEqualTo(1);
    metrics.close();
    assertThat(registry.getMeters()).isEmpty();
  }
}
