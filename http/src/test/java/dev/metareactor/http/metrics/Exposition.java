package dev.metareactor.http.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a {@code /metrics} scrape says, by family: the {@code # TYPE} and {@code # HELP} lines and the label names
 * of each sample ({@code le} and {@code quantile}, which a histogram's or summary's samples add, left out).
 *
 * @param families by name, in the order of the scrape
 */
public record Exposition(Map<String, Family> families) {

  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"(?:[^\"\\\\]|\\\\.)*\"");
  private static final Set<String> SAMPLE_LABELS = Set.of("le", "quantile");

  /**
   * One family.
   *
   * @param labelSets the label names of each sample; one set when every sample has the same
   */
  public record Family(String name, String type, String help, Set<Set<String>> labelSets) {}

  /** Reads Prometheus' text format, where a family's samples follow its {@code # TYPE} line. */
  public static Exposition parse(String text) {
    Map<String, String> helps = new LinkedHashMap<>();
    Map<String, String> types = new LinkedHashMap<>();
    Map<String, Set<Set<String>>> labels = new LinkedHashMap<>();
    String family = "";
    for (String line : text.lines().toList()) {
      if (line.startsWith("# HELP ")) {
        String[] parts = line.split(" ", 4);
        helps.put(parts[2], parts.length > 3 ? parts[3] : "");
      } else if (line.startsWith("# TYPE ")) {
        String[] parts = line.split(" ");
        family = parts[2];
        types.put(family, parts[3]);
        labels.put(family, new TreeSet<>(Exposition::compare));
      } else if (!line.isBlank() && !line.startsWith("#")) {
        String sample = line.split("[{ ]", 2)[0];
        if (!sample.startsWith(family)) {
          throw new IllegalArgumentException("a sample outside its family " + family + ": " + line);
        }
        Set<String> names = new TreeSet<>();
        if (line.charAt(sample.length()) == '{') {
          Matcher label = LABEL.matcher(line.substring(sample.length(), line.lastIndexOf('}')));
          while (label.find()) {
            if (!SAMPLE_LABELS.contains(label.group(1))) {
              names.add(label.group(1));
            }
          }
        }
        labels.get(family).add(names);
      }
    }
    Map<String, Family> families = new LinkedHashMap<>();
    types.forEach((name, type) -> families.put(name,
        new Family(name, type, helps.getOrDefault(name, ""), labels.get(name))));
    return new Exposition(families);
  }

  private static int compare(Set<String> a, Set<String> b) {
    return a.toString().compareTo(b.toString());
  }
}
