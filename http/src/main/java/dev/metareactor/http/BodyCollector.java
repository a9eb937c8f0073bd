package dev.metareactor.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * Accumulates an HTTP body chunk by chunk, keeping at most {@code keep} bytes and failing as soon as the body passes
 * {@code cap} — so an oversized or endless body costs at most {@code cap} bytes of reading and {@code keep} bytes of
 * memory, never an {@code OutOfMemoryError}. Hook answers and error pages on the client side, requests in
 * {@link HookServer}. Confined to the connection's event loop; not thread-safe.
 */
final class BodyCollector {

  private final int keep;
  private final long cap;
  private final LongConsumer allocated;
  private final Supplier<? extends RuntimeException> tooLarge;
  private byte[] bytes;
  private int kept;
  private long total;

  /**
   * @param keep how many bytes to keep (all of a body that is parsed, the start of an error page)
   * @param cap the most bytes accepted in total
   * @param expectedLength the {@code Content-Length}, or -1, to size the buffer once
   * @param allocated told each time the buffer grows, with the bytes added (the first time, its initial size); it
   *     may refuse by throwing, which fails the collection
   * @param tooLarge the error when the body passes the cap
   */
  BodyCollector(int keep, long cap, long expectedLength, LongConsumer allocated,
      Supplier<? extends RuntimeException> tooLarge) {
    this.keep = keep;
    this.cap = cap;
    this.allocated = allocated;
    this.tooLarge = tooLarge;
    int initial = expectedLength >= 0 ? (int) Math.min(expectedLength, keep) : Math.min(keep, 8192);
    allocated.accept(initial);
    this.bytes = new byte[initial];
  }

  /**
   * Copies the chunk (the caller releases it).
   *
   * @throws RuntimeException the {@code tooLarge} error when the body passes the cap, or what {@code allocated}
   *     threw
   */
  BodyCollector append(ByteBuf chunk) {
    int length = chunk.readableBytes();
    total += length;
    if (total > cap) {
      throw tooLarge.get();
    }
    int take = Math.min(length, keep - kept);
    if (take > 0) {
      if (kept + take > bytes.length) {
        int grown = (int) Math.min(keep, Math.max((long) kept + take, 2L * bytes.length));
        allocated.accept(grown - bytes.length);
        bytes = Arrays.copyOf(bytes, grown);
      }
      chunk.getBytes(chunk.readerIndex(), bytes, kept, take);
      kept += take;
    }
    return this;
  }

  /** A message's {@code Content-Length}, or -1 when it has none (or one that is not a number). */
  static long contentLength(HttpHeaders headers) {
    String value = headers.get(HttpHeaderNames.CONTENT_LENGTH);
    if (value == null) {
      return -1;
    }
    try {
      return Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  byte[] bytes() {
    return bytes;
  }

  int length() {
    return kept;
  }

  /** The size of the buffer held: what {@code allocated} was told in total. */
  int capacity() {
    return bytes.length;
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
