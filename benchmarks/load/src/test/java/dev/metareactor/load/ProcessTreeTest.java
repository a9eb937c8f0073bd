package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessTreeTest {

  @TempDir
  Path proc;

  @Test
  void commandWithSpacesAndParenthesesDoesNotShiftTheFields() {
    String line = "4242 (java (engine) x) S 17 4242 4242 0 -1 4194560 1 0 0 0 250 75 0 0 20 0 40 0 1 1 1";
    ProcessTree.Stat stat = ProcessTree.parseStat(line);
    assertThat(stat.parent()).isEqualTo(17);
    assertThat(stat.cpuTicks()).isEqualTo(325);
  }

  @Test
  void sumsTheRootAndItsDescendantsButNothingElse() throws IOException {
    process(10, 1, 100, 50, 1000);   // the engine's launcher script
    process(11, 10, 300, 100, 200_000); // the JVM it started
    process(12, 11, 10, 0, 4);       // a helper the JVM started
    process(20, 1, 9999, 9999, 9999); // someone else
    ProcessTree.Sample sample = new ProcessTree(proc, 10).sample();
    assertThat(sample.cpuSeconds()).isEqualTo(5.6);
    assertThat(sample.rssBytes()).isEqualTo((1000 + 200_000 + 4) * 1024L);
  }

  @Test
  void aProcessThatIsGoneCostsNothing() {
    assertThat(new ProcessTree(proc, 99).sample()).isEqualTo(new ProcessTree.Sample(0, 0));
  }

  private void process(int pid, int parent, int utime, int stime, long rssKb) throws IOException {
    Path dir = Files.createDirectories(proc.resolve(Integer.toString(pid)));
    Files.writeString(dir.resolve("stat"), pid + " (p" + pid + ") S " + parent
        + " 1 1 0 -1 0 0 0 0 0 " + utime + " " + stime + " 0 0 20 0 1 0 1 1 1\n");
    Files.writeString(dir.resolve("status"), "Name:\tp\nVmRSS:\t  " + rssKb + " kB\nThreads:\t1\n");
  }
}
