package dev.metareactor.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The engine's packages depend on each other one way: no cycle, however long. Read from the imports of the main
 * sources (a plain scan, so it needs nothing but the files); a failure names the packages of each cycle and the
 * imports that close it.
 */
class PackageDependenciesTest {

  private static final Path SOURCES = Path.of("src", "main", "java", "dev", "metareactor", "engine");
  private static final String ROOT = "dev.metareactor.engine";
  private static final Pattern IMPORT =
      Pattern.compile("^import (?:static )?" + Pattern.quote(ROOT) + "\\.((?:[a-z]\\w*\\.)*)[A-Z]", Pattern.MULTILINE);

  @Test
  void noPackageCycle() {
    Map<String, Set<String>> dependencies = dependencies();
    assertThat(dependencies).as("packages found").containsKeys("controller", "kube", "queue");
    List<Set<String>> cycles = new Cycles(dependencies).find();
    assertThat(cycles).as(describe(cycles, dependencies)).isEmpty();
  }

  @Test
  void theScanSeesACycle() {
    Map<String, Set<String>> cyclic = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
    assertThat(new Cycles(cyclic).find()).containsExactly(Set.of("a", "b", "c"));
  }

  /** Package (relative to the engine's root, {@code ""} for it) -> the packages its imports name. */
  private static Map<String, Set<String>> dependencies() {
    Map<String, Set<String>> dependencies = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      files.filter(file -> file.toString().endsWith(".java")).forEach(file -> {
        String from = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
        Set<String> to = dependencies.computeIfAbsent(from, p -> new TreeSet<>());
        Matcher imports = IMPORT.matcher(read(file));
        while (imports.find()) {
          String path = imports.group(1);
          String target = path.isEmpty() ? "" : path.substring(0, path.length() - 1);
          if (!target.equals(from)) {
            to.add(target);
          }
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return dependencies;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String describe(List<Set<String>> cycles, Map<String, Set<String>> dependencies) {
    StringBuilder text = new StringBuilder("package cycles:");
    for (Set<String> cycle : cycles) {
      text.append("\n  ").append(cycle).append(':');
      for (String from : cycle) {
        for (String to : dependencies.getOrDefault(from, Set.of())) {
          if (cycle.contains(to)) {
            text.append("\n    ").append(from).append(" -> ").append(to);
          }
        }
      }
    }
    return text.toString();
  }

  /** The strongly connected components of more than one package (Tarjan). */
  private static final class Cycles {
    private final Map<String, Set<String>> graph;
    private final Map<String, Integer> index = new HashMap<>();
    private final Map<String, Integer> low = new HashMap<>();
    private final List<String> stack = new ArrayList<>();
    private final Set<String> onStack = new HashSet<>();
    private final List<Set<String>> found = new ArrayList<>();

    Cycles(Map<String, Set<String>> graph) {
      this.graph = graph;
    }

    List<Set<String>> find() {
      new TreeSet<>(graph.keySet()).forEach(node -> {
        if (!index.containsKey(node)) {
          visit(node);
        }
      });
      return found;
    }

    private void visit(String node) {
      index.put(node, index.size());
      low.put(node, index.get(node));
      stack.add(node);
      onStack.add(node);
      for (String next : graph.getOrDefault(node, Set.of())) {
        if (!index.containsKey(next)) {
          visit(next);
          low.put(node, Math.min(low.get(node), low.get(next)));
        } else if (onStack.contains(next)) {
          low.put(node, Math.min(low.get(node), index.get(next)));
        }
      }
      if (low.get(node).equals(index.get(node))) {
        Set<String> component = new TreeSet<>();
        String member;
        do {
          member = stack.remove(stack.size() - 1);
          onStack.remove(member);
          component.add(member);
        } while (!member.equals(node));
        if (component.size() > 1) {
          found.add(component);
        }
      }
    }
  }
}
