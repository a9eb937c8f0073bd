package dev.metareactor.http.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Holds a scrape to {@link MetricCatalogue}: each family a declared metric with its type and labels (and its help,
 * for a metric Metareactor registers), or the {@code _max} gauge of a declared histogram or summary.
 */
public final class CatalogueCheck {

  private static final String MAX = "_max";

  private CatalogueCheck() {}

  /** The declared metric that exports {@code family}, and whether the family is its {@code _max} gauge. */
  public record Declared(Metric metric, boolean max) {}

  /** Which declared metric exports {@code family} (a hook's for any hook type); empty for none. */
  public static Optional<Declared> declaring(String family) {
    for (Metric metric : MetricCatalogue.all()) {
      if (named(metric).matcher(family).matches()) {
        return Optional.of(new Declared(metric, false));
      }
      boolean timer = metric.type() == Metric.Type.HISTOGRAM || metric.type() == Metric.Type.SUMMARY;
      if (timer && family.endsWith(MAX)
          && named(metric).matcher(family.substring(0, family.length() - MAX.length())).matches()) {
        return Optional.of(new Declared(metric, true));
      }
    }
    return Optional.empty();
  }

  /**
   * Which declared metric a series of a query is: a family's name, or a histogram's {@code _bucket} or a histogram's
   * or summary's {@code _count} or {@code _sum}.
   */
  public static Optional<Metric> declaringSeries(String series) {
    Optional<Declared> family = declaring(series);
    if (family.isPresent()) {
      return family.map(Declared::metric);
    }
    for (String suffix : List.of("_bucket", "_count", "_sum")) {
      if (series.endsWith(suffix)) {
        Optional<Metric> metric = declaring(series.substring(0, series.length() - suffix.length()))
            .filter(found -> !found.max()).map(Declared::metric);
        boolean fits = metric.map(found -> found.type() == Metric.Type.HISTOGRAM
            || found.type() == Metric.Type.SUMMARY && !suffix.equals("_bucket")).orElse(false);
        if (fits) {
          return metric;
        }
      }
    }
    return Optional.empty();
  }

  /** Where {@code exposition} and the catalogue disagree, one line each; none when they agree. */
  public static List<String> disagreements(Exposition exposition) {
    List<String> problems = new ArrayList<>();
    for (Exposition.Family family : exposition.families().values()) {
      Optional<Declared> found = declaring(family.name());
      if (found.isEmpty()) {
        problems.add(family.name() + " (" + family.type() + ") is exported but not declared in MetricCatalogue");
        continue;
      }
      Metric metric = found.get().metric();
      String type = found.get().max() ? "gauge" : metric.type().prometheus();
      if (!family.type().equals(type)) {
        problems.add(family.name() + " is exported as a " + family.type() + ", declared as a " + type);
      }
      Set<String> labels = Set.copyOf(metric.labels());
      for (Set<String> exported : family.labelSets()) {
        if (!exported.equals(labels)) {
          problems.add(family.name() + " is exported with labels " + exported + ", declared with " + metric.labels());
        }
      }
      if (metric.binder() == null && !family.help().equals(metric.help())) {
        problems.add(family.name() + " is exported with help \"" + family.help() + "\", declared with \""
            + metric.help() + "\"");
      }
    }
    return problems;
  }

  /** The declared metrics {@code exposition} holds. */
  public static Set<Metric> exported(Exposition exposition) {
    return exposition.families().keySet().stream().map(CatalogueCheck::declaring).flatMap(Optional::stream)
        .map(Declared::metric).collect(Collectors.toSet());
  }

  /** The Prometheus names {@code metric} may take: its own, or a hook's for any hook type ({@code shadow_sync} too). */
  private static Pattern named(Metric metric) {
    String[] parts = metric.prometheusName().split(Pattern.quote(Metric.HOOK), -1);
    return Pattern.compile(List.of(parts).stream().map(Pattern::quote).collect(Collectors.joining("[a-z][a-z0-9_]*")));
  }
}
