package dev.metareactor.engine.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.api.ResourceRule;
import dev.metareactor.engine.history.EngineFinder;
import dev.metareactor.engine.history.ParentRef;
import dev.metareactor.engine.history.SyncEntry;
import dev.metareactor.engine.history.SyncHistory;
import dev.metareactor.engine.history.SyncPages;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.http.ManagementServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code metareactor why --engine URL} against a real management server serving a ring of recent syncs: the timeline,
 * what it flags, and its exit codes.
 */
class WhyCommandTest {

  private static final ParentRef PARENT = ParentRef.of("CompositeController", "things", "team", "a");

  private final SyncHistory history = new SyncHistory(16, 1 << 20);
  private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final ManagementServer server = ManagementServer.start(new ManagementServer.Options(
      Optional.of(new InetSocketAddress("127.0.0.1", 0)), Optional.empty()), meters, () -> true, path -> {
        SyncPages.Page page = new SyncPages(history, Clock.systemUTC()).page(path);
        return new ManagementServer.DebugPages.Page(page.status(), page.json());
      });
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @AfterEach
  void close() {
    server.close();
    meters.close();
  }

  private int why(String... args) {
    String engine = "--engine=http://127.0.0.1:" + server.metricsAddress().orElseThrow().getPort();
    String[] all = new String[args.length + 1];
    all[0] = engine;
    System.arraycopy(args, 0, all, 1, args.length);
    return WhyCommand.execute(all, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void aParentThatConvergedIsATimelineAndExitsZero() {
    long now = System.currentTimeMillis();
    history.add(PARENT, new SyncEntry(now, List.of(Trigger.of(Trigger.Cause.SPEC)), 0, 3_000, 1, 12_000, 200,
        List.of(new SyncEntry.Write("create", "ConfigMap", "team", "a-0", "2xx")), 0, "success", null));

    assertThat(why("compositecontroller/things", "team/a")).isEqualTo(WhyCommand.CLEAN);
    assertThat(out.toString()).startsWith("compositecontroller/things team/a: 1 syncs seen, 0 failed")
        .contains("synced because spec changed; waited 3.0 ms, hook 12 ms, answer 200 B, wrote ConfigMap team/a-0 "
            + "(create)");
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void aHotLoopIsFlaggedAndExitsOne() {
    long now = System.currentTimeMillis();
    for (int i = 0; i < 8; i++) {
      history.add(PARENT, new SyncEntry(now + i * 100L, List.of(Trigger.of(Trigger.Cause.STATUS)), 0, 1_000, 1,
          2_000, 100, List.of(), 0, "success", null));
    }
    assertThat(why("compositecontroller/things", "team/a")).isEqualTo(WhyCommand.FLAGGED);
    assertThat(out.toString()).contains("! hot loop: the last 8 syncs wrote nothing")
        .contains("most often because status changed");
  }

  @Test
  void aParentNeverSyncedHasNoTimelineAndExitsTwo() {
    assertThat(why("compositecontroller/things", "team/nobody")).isEqualTo(WhyCommand.ERROR);
    assertThat(err.toString())
        .startsWith("metareactor why: no sync of team/nobody kept for compositecontroller/things");
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void noEngineThereExitsTwo() {
    int code = WhyCommand.execute(new String[] {"--engine=http://127.0.0.1:1", "compositecontroller/things", "team/a"},
        new PrintWriter(out, true), new PrintWriter(err, true));
    assertThat(code).isEqualTo(WhyCommand.ERROR);
    assertThat(err.toString()).startsWith("metareactor why: cannot reach the engine at http://127.0.0.1:1/");
  }

  @Test
  void theArgumentsNameAControllerAndAParent() {
    assertThat(WhyCommand.parentRef("CompositeController/things", "team/a")).isEqualTo(PARENT);
    assertThat(WhyCommand.parentRef("mapcontroller/m", "input"))
        .isEqualTo(new ParentRef("mapcontroller", "m", "", "input"));
    assertThatThrownBy(() -> WhyCommand.parentRef("deployment/x", "team/a"))
        .hasMessageContaining("compositecontroller");
    assertThatThrownBy(() -> WhyCommand.parentRef("compositecontroller/x", "a/b/c")).hasMessageContaining("NAMESPACE");
    assertThat(why("compositecontroller", "team/a")).isEqualTo(WhyCommand.ERROR);
  }

  @Test
  void theEngineIsTheLeaseHoldersPodReachedThroughTheApiServerOnItsPortNamedMetrics() {
    assertThat(EngineFinder.podOf("metareactor-7d9f-abcde_0b7c7a4e-1d6f-4a55-9d35-3f1f0b1e7a10"))
        .isEqualTo("metareactor-7d9f-abcde");
    assertThat(new EngineFinder("metacontroller", 0).proxyPath("metareactor-0", 9999, SyncPages.path(PARENT)))
        .isEqualTo("/api/v1/namespaces/metacontroller/pods/metareactor-0:9999/proxy/"
            + "debug/syncs/compositecontroller/things/team/a");
    assertThat(EngineFinder.metricsPort(KubeJson.mapper().readTree("""
        {"spec": {"containers": [{"name": "engine", "ports": [{"name": "probes", "containerPort": 8081},
          {"name": "metrics", "containerPort": 9090}]}]}}"""))).isEqualTo(9090);
    assertThat(EngineFinder.metricsPort(KubeJson.mapper().readTree("""
        {"spec": {"containers": [{"name": "engine", "ports": [{"containerPort": 8081}]}]}}""")))
        .isEqualTo(EngineFinder.DEFAULT_PORT);
    assertThatThrownBy(() -> new EngineFinder("metacontroller", 70_000)).hasMessageContaining("port");
  }

  @Test
  void theLeaseToAskIsTheOwningShardsNamedByTheParentsLabelElseTheLeaders() {
    OwningLease owning = new OwningLease("metacontroller");
    assertThat(owning.leaseOf("")).isEqualTo("metacontroller");
    assertThat(owning.leaseOf("s2")).isEqualTo("metacontroller-shard-s2");
    assertThat(OwningLease.path(new ResourceRule("v1", "configmaps"), PARENT))
        .isEqualTo("/api/v1/namespaces/team/configmaps/a");
    assertThat(OwningLease.path(new ResourceRule("example.com/v1", "things"),
        ParentRef.of("CompositeController", "things", "", "a"))).isEqualTo("/apis/example.com/v1/things/a");
    assertThat(OwningLease.resourcesOf("DecoratorController", KubeJson.mapper().readTree("""
        {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "DecoratorController", "metadata": {"name": "d"},
         "spec": {"resources": [{"apiVersion": "v1", "resource": "services"},
                                {"apiVersion": "apps/v1", "resource": "statefulsets"}],
                  "hooks": {"sync": {"webhook": {"url": "http://hook/sync"}}}}}""")))
        .containsExactly(new ResourceRule("v1", "services"), new ResourceRule("apps/v1", "statefulsets"));
    assertThatThrownBy(() -> OwningLease.resourcesOf("Deployment", KubeJson.mapper().readTree("{}")))
        .hasMessageContaining("not a controller object");
  }
}
