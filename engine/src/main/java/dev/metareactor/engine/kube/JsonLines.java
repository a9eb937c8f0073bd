package dev.metareactor.engine.kube;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Splits a stream of chunks into newline-terminated lines (a watch body: one JSON event per line), whatever the
 * chunk boundaries. Not thread-safe: one instance per stream, fed in order.
 */
final class JsonLines {

  private final int maxLine;
  private byte[] pending = new byte[0];
  private int length;

  JsonLines(int maxLine) {
    this.maxLine = maxLine;
  }

  /** The lines this chunk completes (without their {@code \n}); blank lines are dropped. */
  List<byte[]> feed(byte[] chunk) {
    List<byte[]> lines = new ArrayList<>(2);
    int start = 0;
    for (int i = 0; i < chunk.length; i++) {
      if (chunk[i] == '\n') {
        byte[] line;
        if (length == 0) {
          line = Arrays.copyOfRange(chunk, start, i);
        } else {
          append(chunk, start, i);
          line = Arrays.copyOf(pending, length);
          length = 0;
        }
        if (!blank(line)) {
          lines.add(line);
        }
        start = i + 1;
      }
    }
    if (start < chunk.length) {
      append(chunk, start, chunk.length);
    }
    return lines;
  }

  /** What is left after the last newline when the stream ends, if it is not blank; else nothing. */
  byte @Nullable [] rest() {
    byte[] line = Arrays.copyOf(pending, length);
    length = 0;
    return blank(line) ? null : line;
  }

  private void append(byte[] chunk, int from, int to) {
    int needed = length + (to - from);
    if (needed > maxLine) {
      throw new IllegalStateException("a watch event longer than " + maxLine + " bytes");
    }
    if (needed > pending.length) {
      pending = Arrays.copyOf(pending, Math.max(needed, pending.length * 2));
    }
    System.arraycopy(chunk, from, pending, length, to - from);
    length = needed;
  }

  private static boolean blank(byte[] line) {
    for (byte b : line) {
      if (b != ' ' && b != '\r' && b != '\t') {
        return false;
      }
    }
    return true;
  }
}
