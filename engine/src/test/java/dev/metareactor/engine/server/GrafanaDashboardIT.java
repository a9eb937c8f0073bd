package dev.metareactor.engine.server;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.ControlPlane;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * {@code manifests/grafana/metareactor-dashboard.json} queries only what the engine exports: every metric name in
 * every panel's queries appears in a scrape of a running engine that has synced a parent through a sync hook.
 */
@LocalKubernetes
class GrafanaDashboardIT {

  private static final Pattern METRIC = Pattern.compile(
      "\\b((?:workqueue|controller_runtime|metacontroller|metareactor|resilience4j|jvm|process|system)_[a-z0-9_]+)");

  @Test
  void everyMetricTheDashboardQueriesIsExported(LocalCluster cluster) throws Exception {
    Path file = ControlPlane.get().repoRoot().resolve("manifests/grafana/metareactor-dashboard.json");
    JsonNode dashboard = KubeJson.mapper().readTree(Files.readString(file));
    List<String> queries = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      if (!panel.path("type").asString().equals("row")) {
        assertThat(panel.path("targets")).as("queries of panel %s", panel.path("title")).isNotEmpty();
        panel.path("targets").forEach(target -> queries.add(target.path("expr").asString()));
      }
    }
    Set<String> queried = new TreeSet<>();
    queries.forEach(query -> {
      Matcher matcher = METRIC.matcher(query);
      while (matcher.find()) {
        queried.add(matcher.group(1));
      }
    });
    assertThat(queried).as("metric names in the dashboard").hasSizeGreaterThan(20);

    ParentCrd parents = ParentCrd.create(cluster, "Scraped");
    try (HookServer hooks = HookServer.builder().route("/sync", request -> {
      ObjectNode answer = KubeJson.nodes().objectNode();
      answer.putArray("children").addObject().put("apiVersion", "v1").put("kind", "ConfigMap")
          .putObject("metadata").put("name", request.path("parent").path("metadata").path("name").asString());
      return answer;
    }).start(); EngineUnderTest engine = EngineUnderTest.start(cluster)) {
      engine.createController("""
          apiVersion: metacontroller.k8s.io/v1alpha1
          kind: CompositeController
          metadata:
            name: scraped
          spec:
            generateSelector: true
            parentResource: {apiVersion: %s, resource: %s}
            childResources:
            - {apiVersion: v1, resource: configmaps}
            hooks:
              sync: {webhook: {url: "%s"}}
          """.formatted(parents.apiVersion(), parents.plural(), hooks.url("/sync")));
      parents.in(cluster.client()).resource(parents.object(cluster.namespace(), "scraped-0", Map.of())).create();
      await().atMost(TIMEOUT).until(() -> cluster.client().configMaps().withName("scraped-0").get() != null);

      Set<String> exported = new TreeSet<>();
      for (String line : engine.get(true, "/metrics").body().lines().toList()) {
        if (!line.startsWith("#") && !line.isBlank()) {
          exported.add(line.split("[{ ]", 2)[0]);
        }
      }
      assertThat(exported).as("metric names the engine exports").containsAll(queried);
    }
  }
}
