package dev.metareactor.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time and resident memory of a process and everything it started, read from {@code /proc} — the same numbers
 * for an engine of any language, taken from outside it. An engine started through a shell script is measured with
 * the script's children.
 */
final class ProcessTree {

  /** {@code sysconf(_SC_CLK_TCK)}: 100 on every Linux this runs on (the kernel's USER_HZ). */
  private static final double TICKS_PER_SECOND = 100.0;

  /** One reading. */
  record Sample(double cpuSeconds, long rssBytes) {}

  private final Path proc;
  private final long rootPid;

  ProcessTree(long rootPid) {
    this(Path.of("/proc"), rootPid);
  }

  ProcessTree(Path proc, long rootPid) {
    this.proc = proc;
    this.rootPid = rootPid;
  }

  /** CPU seconds (user + system) and RSS summed over the root and its live descendants. */
  Sample sample() {
    Map<Long, List<Long>> children = new HashMap<>();
    Map<Long, Stat> stats = new HashMap<>();
    try (Stream<Path> entries = Files.list(proc)) {
      for (Path entry : (Iterable<Path>) entries::iterator) {
        String name = entry.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        Stat stat = readStat(entry.resolve("stat"));
        if (stat != null) {
          long pid = Long.parseLong(name);
          stats.put(pid, stat);
          children.computeIfAbsent(stat.parent(), p -> new ArrayList<>()).add(pid);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list " + proc, e);
    }
    double cpu = 0;
    long rss = 0;
    List<Long> todo = new ArrayList<>(List.of(rootPid));
    while (!todo.isEmpty()) {
      long pid = todo.remove(todo.size() - 1);
      Stat stat = stats.get(pid);
      if (stat == null) {
        continue;
      }
      cpu += stat.cpuTicks() / TICKS_PER_SECOND;
      rss += rssBytes(proc.resolve(Long.toString(pid)).resolve("status"));
      todo.addAll(children.getOrDefault(pid, List.of()));
    }
    return new Sample(cpu, rss);
  }

  record Stat(long parent, long cpuTicks) {}

  /** Fields after the command (which may contain spaces and parentheses): state ppid ... utime(14) stime(15). */
  static Stat parseStat(String line) {
    int close = line.lastIndexOf(')');
    String[] fields = line.substring(close + 2).trim().split(" ");
    // fields[0] is field 3 (state): field n is fields[n - 3].
    long ppid = Long.parseLong(fields[4 - 3]);
    long utime = Long.parseLong(fields[14 - 3]);
    long stime = Long.parseLong(fields[15 - 3]);
    return new Stat(ppid, utime + stime);
  }

  /** CPU seconds the whole machine was busy (not idle, not waiting for I/O) since boot, from {@code /proc/stat}. */
  static double machineBusySeconds() {
    try {
      return busySeconds(Files.readAllLines(Path.of("/proc/stat")).get(0));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read /proc/stat", e);
    }
  }

  /** {@code cpu user nice system idle iowait irq softirq steal ...}: all but idle and iowait. */
  static double busySeconds(String cpuLine) {
    String[] f = cpuLine.trim().split("\\s+");
    long busy = 0;
    for (int i = 1; i < f.length && i <= 8; i++) {
      if (i != 4 && i != 5) {
        busy += Long.parseLong(f[i]);
      }
    }
    return busy / TICKS_PER_SECOND;
  }

  private static Stat readStat(Path file) {
    try {
      return parseStat(Files.readString(file));
    } catch (NoSuchFileException e) {
      return null; // exited meanwhile
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** {@code VmRSS} of {@code /proc/<pid>/status}, 0 when the process is gone or a kernel thread. */
  static long rssBytes(Path status) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      return 0;
    }
    return 0;
  }
}
