import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;

/**
 * Prints the slowest test classes of a build: the time JUnit gives each class in the Surefire and Failsafe reports
 * ({@code target/surefire-reports/TEST-*.xml}, {@code target/failsafe-reports/TEST-*.xml}) of every module under a
 * directory. The reactor's last module ({@code test-times/}) runs it after {@code verify}; by hand:
 *
 * <pre>{@code java hack/SlowestTests.java [root] [count] [since]}</pre>
 *
 * <p>{@code root} is the checkout (default {@code .}), {@code count} how many classes (default 10), and {@code since}
 * an instant ({@code 2026-11-26T17:05:00Z}): reports written before it are left out, so that those a build did not
 * write again (the integration tests' under {@code -DskipITs}, a class since removed) do not pass for its own.
 * A single-file program (run by {@code java} from its source) so that it needs nothing but the JDK that runs Maven.
 */
public final class SlowestTests {

  private SlowestTests() {}

  /** One class's report: where it was run and what JUnit recorded. */
  record Report(String module, String plugin, String className, int tests, double seconds) {}

  public static void main(String[] args) throws Exception {
    Path root = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
    int count = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    Instant since = args.length > 2 ? Instant.parse(args[2]) : Instant.EPOCH;
    List<Report> reports = reports(root, since);
    if (reports.isEmpty()) {
      System.out.println("No test reports written since " + since + " under " + root + ".");
      return;
    }
    reports.sort(Comparator.comparingDouble(Report::seconds).reversed());
    double total = reports.stream().mapToDouble(Report::seconds).sum();
    int shown = Math.min(count, reports.size());
    System.out.printf(Locale.ROOT, "The %d slowest of %d test classes (%.0f s in all, as JUnit times them):%n", shown,
        reports.size(), total);
    for (Report report : reports.subList(0, shown)) {
      System.out.printf(Locale.ROOT, "%8.1f s  %-26s %-8s %s (%d test%s)%n", report.seconds(), report.module(),
          report.plugin(), report.className(), report.tests(), report.tests() == 1 ? "" : "s");
    }
  }

  /** Every class's report under {@code root} written at {@code since} or later. */
  static List<Report> reports(Path root, Instant since) throws IOException {
    List<Report> reports = new ArrayList<>();
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
        // .git and the like hold no module.
        return dir.equals(root) || !dir.getFileName().toString().startsWith(".") ? FileVisitResult.CONTINUE
            : FileVisitResult.SKIP_SUBTREE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
        if (isClassReport(file) && !attributes.lastModifiedTime().toInstant().isBefore(since)) {
          reports.add(read(root, file));
        }
        return FileVisitResult.CONTINUE;
      }
    });
    return reports;
  }

  /** {@code <module>/target/{surefire,failsafe}-reports/TEST-<class>.xml}. */
  private static boolean isClassReport(Path file) {
    Path dir = file.getParent();
    String name = file.getFileName().toString();
    return dir != null && dir.getParent() != null && name.startsWith("TEST-") && name.endsWith(".xml")
        && (dir.endsWith("surefire-reports") || dir.endsWith("failsafe-reports"))
        && dir.getParent().endsWith("target");
  }

  private static Report read(Path root, Path file) throws IOException {
    try {
      Element suite = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile())
          .getDocumentElement();
      Path dir = file.getParent();
      String module = root.relativize(dir.getParent().getParent()).toString();
      return new Report(module.isEmpty() ? "." : module, dir.getFileName().toString().replace("-reports", ""),
          suite.getAttribute("name"), Integer.parseInt(suite.getAttribute("tests")),
          Double.parseDouble(suite.getAttribute("time").replace(",", "")));
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("cannot read the test report " + file + ": " + e.getMessage(), e);
    }
  }
}
