package dev.metareactor.http.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The series a Grafana dashboard's queries name ({@code manifests/grafana/metareactor-dashboard.json}). */
public final class DashboardQueries {

  private static final Pattern METRIC = Pattern.compile(
      "\\b((?:workqueue|controller_runtime|metacontroller|metareactor|resilience4j|jvm|process|system)_[a-z0-9_]+)");

  private DashboardQueries() {}

  /** Every metric name in every panel's queries; each panel but a row must have queries. */
  public static Set<String> series(Path dashboard) throws IOException {
    JsonNode panels = JsonMapper.builder().build().readTree(Files.readString(dashboard)).path("panels");
    Set<String> queried = new TreeSet<>();
    for (JsonNode panel : panels) {
      if (!panel.path("type").asString().equals("row")) {
        assertThat(panel.path("targets")).as("queries of panel %s", panel.path("title")).isNotEmpty();
        for (JsonNode target : panel.path("targets")) {
          Matcher matcher = METRIC.matcher(target.path("expr").asString());
          while (matcher.find()) {
            queried.add(matcher.group(1));
          }
        }
      }
    }
    assertThat(queried).as("metric names in the dashboard").hasSizeGreaterThan(20);
    return queried;
  }
}
