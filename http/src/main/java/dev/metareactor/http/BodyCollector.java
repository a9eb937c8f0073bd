package dev.metareactor.http;

import dev.metareactor.http.HookCallException.Reason;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Accumulates a response body chunk by chunk, keeping at most {@code keep} bytes and failing as soon as the body
 * passes {@code cap} — so an oversized or endless answer costs at most {@code cap} bytes of reading and {@code keep}
 * bytes of memory, never an {@code OutOfMemoryError}. Confined to the connection's event loop; not thread-safe.
 */
final class BodyCollector {

  private final int status;
  private final int keep;
  private final long cap;
  private byte[] bytes;
  private int kept;
  private long total;

  /**
   * @param status the answer's HTTP status, for the error
   * @param keep how many bytes to keep (all of a body that is parsed, the start of an error page)
   * @param cap the most bytes accepted in total
   * @param expectedLength the {@code Content-Length}, or -1, to size the buffer once
   */
  BodyCollector(int status, int keep, long cap, long expectedLength) {
    this.status = status;
    this.keep = keep;
    this.cap = cap;
    int initial = expectedLength >= 0 ? (int) Math.min(expectedLength, keep) : Math.min(keep, 8192);
    this.bytes = new byte[initial];
  }

  static HookCallException tooLarge(int status, long cap) {
    return new HookCallException(Reason.INVALID_RESPONSE, "response body exceeds the limit of " + cap + " bytes",
        status, false, null);
  }

  /**
   * Copies the chunk (the caller releases it).
   *
   * @throws HookCallException when the body passes the cap
   */
  BodyCollector append(ByteBuf chunk) {
    int length = chunk.readableBytes();
    total += length;
    if (total > cap) {
      throw tooLarge(status, cap);
    }
    int take = Math.min(length, keep - kept);
    if (take > 0) {
      if (kept + take > bytes.length) {
        bytes = Arrays.copyOf(bytes, (int) Math.min(keep, Math.max((long) kept + take, 2L * bytes.length)));
      }
      chunk.getBytes(chunk.readerIndex(), bytes, kept, take);
      kept += take;
    }
    return this;
  }

  byte[] bytes() {
    return bytes;
  }

  int length() {
    return kept;
  }

  /**
   * The kept bytes as one line of text for a message, marked with {@code ...} when the body went on: control and
   * format characters (line breaks, escapes, bidirectional overrides) and runs of white space become one space, so
   * what a hook sends cannot forge log lines or hide text in an Event; a character cut in two at the end is dropped.
   */
  String text() {
    String text = new String(bytes, 0, kept, StandardCharsets.UTF_8);
    boolean cut = total > kept;
    if (cut && text.endsWith("\uFFFD")) {
      text = text.substring(0, text.length() - 1);
    }
    StringBuilder line = new StringBuilder(text.length());
    boolean space = false;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      int type = Character.getType(c);
      boolean blank = Character.isWhitespace(c) || type == Character.CONTROL || type == Character.FORMAT
          || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
      if (!blank) {
        line.append(c);
      } else if (!space && line.length() > 0) {
        line.append(' ');
      }
      space = blank;
    }
    String shown = line.toString().strip();
    return cut ? shown + "..." : shown;
  }
}
