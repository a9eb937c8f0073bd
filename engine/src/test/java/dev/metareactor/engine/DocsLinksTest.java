package dev.metareactor.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every relative link of the project's Markdown (README.md, docs/, benchmarks/, apply/, hack/, the examples' READMEs)
 * leads somewhere: to a file or directory of the repository and, when it names an anchor, to a heading of that page,
 * as GitHub renders it. A plain scan of the files, so it needs nothing but the checkout; a failure lists each broken
 * link with the file and line it is on.
 */
class DocsLinksTest {

  /** The repository's root: tests run in the engine module's directory. */
  private static final Path ROOT = Path.of("..");
  /** Deep enough for examples/NAME/README.md; load-harness results (benchmarks/load/results/TIME/) lie deeper. */
  private static final int DEPTH = 3;

  private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
  private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");
  private static final Pattern LINK = Pattern.compile("\\]\\(<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");
  private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

  @Test
  void everyRelativeLinkLeadsToAFileAndHeading() {
    List<Path> pages = markdown(ROOT);
    assertThat(pages).as("Markdown files found under %s", ROOT.toAbsolutePath().normalize())
        .contains(ROOT.resolve("README.md"), ROOT.resolve("docs/operations.md"),
            ROOT.resolve("benchmarks/README.md"), ROOT.resolve("examples/hello-world/README.md"));
    List<String> broken = new Links(ROOT).broken(pages);
    assertThat(broken).as("broken links:\n" + String.join("\n", broken)).isEmpty();
  }

  @Test
  void theScanSeesMissingFilesAndHeadings(@TempDir Path root) throws IOException {
    Files.createDirectories(root.resolve("docs"));
    Files.writeString(root.resolve("README.md"), String.join("\n",
        "# Title", "", "## Quick start (`hack/quickstart.sh`)", "",
        "[ok](docs/page.md#what-metacontrollers-users-asked-for) [ok](#quick-start-hackquickstartsh) [ok](docs)",
        "[ok](https://example.com/x.md#nowhere) [no file](docs/gone.md) [no heading](docs/page.md#gone)",
        "[no heading here](#title-2) `[in code](nowhere.md)`", "```", "[in a fence](nowhere.md)", "```"));
    Files.writeString(root.resolve("docs/page.md"), String.join("\n",
        "# What Metacontroller's users asked for", "", "[back](../README.md#title)"));
    List<String> broken = new Links(root).broken(markdown(root));
    assertThat(broken).containsExactly(
        "README.md:6: docs/gone.md (no such file)",
        "README.md:6: docs/page.md#gone (no such heading in docs/page.md)",
        "README.md:7: #title-2 (no such heading in README.md)");
  }

  @Test
  void anchorsAreGitHubs() {
    assertThat(Links.anchors(List.of("# Load harness (`benchmarks/load`)", "## What Metacontroller's users asked for",
        "### Where the suite's time goes", "## Notes", "## Notes", "```", "# not a heading", "```",
        "## `--zap-stacktrace-level` and `snake_case`")))
        .containsExactlyInAnyOrder("load-harness-benchmarksload", "what-metacontrollers-users-asked-for",
            "where-the-suites-time-goes", "notes", "notes-1", "--zap-stacktrace-level-and-snake_case");
  }

  private static List<Path> markdown(Path root) {
    try (Stream<Path> files = Files.walk(root, DEPTH)) {
      return files.filter(file -> file.toString().endsWith(".md"))
          .filter(file -> root.relativize(file).toString().split("/")[0].matches("[^.].*"))
          .filter(file -> !root.relativize(file).toString().contains("target/"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The links of a set of pages, checked against the files and headings of the repository under {@code root}. */
  private static final class Links {
    private final Path root;
    private final Map<Path, Set<String>> anchorsByPage = new HashMap<>();

    Links(Path root) {
      this.root = root.toAbsolutePath().normalize();
    }

    /** {@code file:line: target (why)} for every link that leads nowhere. */
    List<String> broken(List<Path> pages) {
      List<String> broken = new ArrayList<>();
      for (Path page : pages) {
        Path absolute = page.toAbsolutePath().normalize();
        List<String> lines = lines(absolute);
        boolean fenced = false;
        for (int i = 0; i < lines.size(); i++) {
          String line = lines.get(i);
          if (FENCE.matcher(line).find()) {
            fenced = !fenced;
            continue;
          }
          if (fenced) {
            continue;
          }
          Matcher link = LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
          while (link.find()) {
            String target = link.group(1);
            String problem = problem(absolute, target);
            if (problem != null) {
              broken.add(root.relativize(absolute) + ":" + (i + 1) + ": " + target + " (" + problem + ")");
            }
          }
        }
      }
      return broken;
    }

    /** Why {@code target}, linked from {@code page}, leads nowhere; null when it leads somewhere. */
    private @Nullable String problem(Path page, String target) {
      if (target.isEmpty() || SCHEME.matcher(target).find()) {
        return null; // web addresses and mail are not the repository's to check
      }
      int hash = target.indexOf('#');
      String file = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
      Path linked = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
      if (!linked.startsWith(root) || !Files.exists(linked)) {
        return "no such file";
      }
      if (hash < 0) {
        return null;
      }
      String anchor = target.substring(hash + 1);
      if (!linked.toString().endsWith(".md")) {
        return "an anchor into a file that is not Markdown";
      }
      Set<String> anchors = anchorsByPage.computeIfAbsent(linked, p -> anchors(lines(p)));
      return anchors.contains(anchor) ? null : "no such heading in " + root.relativize(linked);
    }

    /**
     * The anchors GitHub gives a page's headings: the heading's text (code spans without their backticks, links
     * as their text, no emphasis marks) lower-cased, everything but letters, digits, spaces, hyphens and
     * underscores dropped, each space a hyphen; a repeated one gets {@code -1}, {@code -2}... Plus HTML anchors.
     */
    static Set<String> anchors(List<String> lines) {
      Set<String> anchors = new HashSet<>();
      Map<String, Integer> seen = new HashMap<>();
      boolean fenced = false;
      for (String line : lines) {
        if (FENCE.matcher(line).find()) {
          fenced = !fenced;
          continue;
        }
        if (fenced) {
          continue;
        }
        Matcher html = HTML_ANCHOR.matcher(line);
        while (html.find()) {
          anchors.add(html.group(1));
        }
        Matcher heading = HEADING.matcher(line);
        if (heading.matches()) {
          String text = heading.group(1).replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "")
              .replaceAll("\\*+", "");
          String slug = text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "")
              .replace(' ', '-');
          int repeats = seen.merge(slug, 1, Integer::sum) - 1;
          anchors.add(repeats == 0 ? slug : slug + "-" + repeats);
        }
      }
      return anchors;
    }

    private static List<String> lines(Path file) {
      try {
        return Files.readAllLines(file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
