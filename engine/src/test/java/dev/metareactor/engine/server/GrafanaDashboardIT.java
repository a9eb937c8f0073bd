package dev.metareactor.engine.server;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.http.metrics.CatalogueCheck;
import dev.metareactor.http.metrics.DashboardQueries;
import dev.metareactor.http.metrics.Exposition;
import dev.metareactor.http.metrics.Metric;
import dev.metareactor.http.metrics.MetricCatalogue;
import dev.metareactor.testing.k8s.ControlPlane;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A running engine's {@code /metrics} is what {@link MetricCatalogue} declares, and holds what the Grafana dashboard
 * ({@code manifests/grafana/metareactor-dashboard.json}) queries. The engine runs with sharding on (so it is a shard
 * and the sharder) and syncs a parent through a sync hook that asks for two ConfigMaps, one of them a name a user's
 * ConfigMap holds (a child conflict): then it exports every declared metric and no other, each with its declared
 * type and labels, and its help for Metareactor's own. The scrape is left in {@code target/metrics-scrape.txt}, to
 * compare what a change does to the exported names.
 */
@LocalKubernetes
class GrafanaDashboardIT {

  /** What a run need not export: the garbage collector's pauses and phases, none before the first of them. */
  private static final Set<String> MAY_BE_ABSENT =
      Set.of("jvm_gc_pause_seconds", "jvm_gc_concurrent_phase_time_seconds");

  @Test
  void theEngineExportsWhatTheCatalogueDeclaresAndTheDashboardQueries(LocalCluster cluster) throws Exception {
    Set<String> queried = DashboardQueries.series(
        ControlPlane.get().repoRoot().resolve("manifests/grafana/metareactor-dashboard.json"));
    Set<String> expected = MetricCatalogue.all().stream().map(Metric::prometheusName)
        .filter(name -> !MAY_BE_ABSENT.contains(name)).collect(Collectors.toCollection(TreeSet::new));

    ParentCrd parents = ParentCrd.create(cluster, "Scraped");
    cluster.client().configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("scraped-taken")
        .endMetadata().build()).create();
    try (HookServer hooks = HookServer.builder().route("/sync", request -> {
      ObjectNode answer = KubeJson.nodes().objectNode();
      ArrayNode children = answer.putArray("children");
      for (String name : List.of(request.path("parent").path("metadata").path("name").asString(), "scraped-taken")) {
        children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap").putObject("metadata").put("name", name);
      }
      return answer;
    }).start(); EngineUnderTest engine = EngineUnderTest.start(cluster, "--sharding", "--shard-name=s1",
        "--leader-election-namespace=" + cluster.namespace(), "--leader-election-id=scraped")) {
      engine.createController("""
          apiVersion: metacontroller.k8s.io/v1alpha1
          kind: CompositeController
          metadata:
            name: scraped
            # A shadow of the same hook: the controller's shadow comparisons are counted.
            annotations: {metareactor.dev/shadow-sync-url: "%3$s"}
          spec:
            generateSelector: true
            parentResource: {apiVersion: %1$s, resource: %2$s}
            childResources:
            - {apiVersion: v1, resource: configmaps}
            hooks:
              sync: {webhook: {url: "%3$s"}}
          """.formatted(parents.apiVersion(), parents.plural(), hooks.url("/sync")));
      parents.in(cluster.client()).resource(parents.object(cluster.namespace(), "scraped-0", Map.of())).create();
      await().atMost(TIMEOUT).until(() -> cluster.client().configMaps().withName("scraped-0").get() != null);

      // The last to come: the conflict is counted by the sync that meets it, the sharder's counters once it settled.
      await().atMost(TIMEOUT).until(() -> CatalogueCheck.exported(scrape(engine))
          .containsAll(List.of(MetricCatalogue.CHILD_CONFLICTS, MetricCatalogue.SHARD_ASSIGNMENTS)));
      String text = engine.get(true, "/metrics").body();
      Files.writeString(Path.of("target", "metrics-scrape.txt"), text);
      Exposition exposition = Exposition.parse(text);
      Set<String> exported = CatalogueCheck.exported(exposition).stream().map(Metric::prometheusName)
          .collect(Collectors.toSet());
      Set<String> series = text.lines().filter(line -> !line.startsWith("#") && !line.isBlank())
          .map(line -> line.split("[{ ]", 2)[0]).collect(Collectors.toSet());
      SoftAssertions.assertSoftly(softly -> {
        softly.assertThat(expected).as("declared metrics the engine does not export")
            .filteredOn(name -> !exported.contains(name)).isEmpty();
        softly.assertThat(CatalogueCheck.disagreements(exposition)).as("the scrape against MetricCatalogue").isEmpty();
        softly.assertThat(queried).as("series the dashboard queries that the engine does not export")
            .filteredOn(name -> !series.contains(name)).isEmpty();
      });
    }
  }

  private static Exposition scrape(EngineUnderTest engine) {
    return Exposition.parse(engine.get(true, "/metrics").body());
  }
}
