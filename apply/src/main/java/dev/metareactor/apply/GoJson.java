package dev.metareactor.apply;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Serializes a JSON tree exactly as Go's {@code encoding/json.Marshal} serializes the same value after it was
 * decoded by Kubernetes' {@code k8s.io/apimachinery/pkg/util/json} (which keeps integral literals as
 * {@code int64} and everything else as {@code float64}).
 *
 * <p>Why byte-identical: Metacontroller stores the desired object in the last-applied annotation and decides
 * whether to update a child by deep equality, annotation included. Any byte of difference here would make
 * every existing child of a migrated cluster look changed and be rewritten once. The engine also sends the body
 * of every child create and update in this form ({@link #marshalUtf8}), as Metacontroller's client does: a typed
 * field such as a Deployment's {@code spec.replicas} rejects {@code 3.0}, which Go writes as {@code 3}.
 *
 * <p>The rules, as Go applies them:
 * <ul>
 *   <li>object keys sorted by their UTF-8 bytes (equivalently, by code point), output compact;</li>
 *   <li>strings escaped with HTML escaping on: {@code <}, {@code >}, {@code &}, U+2028 and U+2029 become
 *       <code>&#92;u003c</code>-style escapes, {@code \b \f \n \r \t \" \\} use short escapes, other control characters
 *       <code>&#92;u00XX</code> (lower-case hex); an unpaired surrogate becomes U+FFFD, as Go's decoder would have
 *       made it;</li>
 *   <li>integers that fit in 64 bits are written in full; other numbers are float64 values written in Go's
 *       shortest form: plain decimal unless the magnitude is below 1e-6 or at least 1e21, where Go uses
 *       exponent notation such as {@code 1e+21} or {@code 1e-7}.</li>
 * </ul>
 */
public final class GoJson {

  /** Go sorts map keys by byte order of their UTF-8 encoding, which is code point order. */
  static final Comparator<String> CODE_POINT_ORDER = GoJson::compareCodePoints;

  private static final char[] HEX = "0123456789abcdef".toCharArray();
  /** ASCII characters Go escapes: control characters, {@code "}, {@code \}, and {@code < > &} (HTML-safe output). */
  private static final boolean[] ESCAPED_ASCII = escapedAscii();
  private static final double EXPONENT_FORMAT_ABOVE = 1e21;
  private static final double EXPONENT_FORMAT_BELOW = 1e-6;

  private GoJson() {}

  /** Returns the Go {@code encoding/json} serialization of {@code node}. */
  public static String marshal(JsonNode node) {
    Utf8Out out = new Utf8Out(Scratch.get());
    write(node, out, 0);
    return out.text();
  }

  /**
   * The same serialization as UTF-8 bytes: what Metacontroller's Go client sends as the body of a create or an
   * update, so the API server reads every number as it would from Metacontroller ({@code 3}, never {@code 3.0}).
   */
  public static byte[] marshalUtf8(JsonNode node) {
    Utf8Out out = new Utf8Out(Scratch.get());
    write(node, out, 0);
    return out.bytes();
  }

  /**
   * Whether {@code marshal(node).equals(expected)}, without building the string: the steady-state check of every
   * sync compares the desired object with the annotation already on the child. The serialization goes into the
   * thread's reused buffer and is compared there, so the answer allocates nothing when the text is ASCII.
   */
  public static boolean marshalsTo(JsonNode node, String expected) {
    Utf8Out out = new Utf8Out(Scratch.get());
    write(node, out, 0);
    return out.matches(expected);
  }

  /**
   * A 64-bit FNV-1a hash of {@link #marshalUtf8}'s bytes, computed in the thread's reused buffer: a fingerprint of a
   * desired object that allocates nothing, for remembering what was checked before.
   */
  public static long fingerprint(JsonNode node) {
    Utf8Out out = new Utf8Out(Scratch.get());
    write(node, out, 0);
    return out.fingerprint();
  }

  /**
   * UTF-8 into the thread's reusable buffer; only the finished text or bytes are allocated. The writer never
   * splits a surrogate pair across two appends, and has already replaced unpaired surrogates.
   */
  private static final class Utf8Out {
    private final Scratch scratch;
    private byte[] buffer;
    private int size;

    Utf8Out(Scratch scratch) {
      this.scratch = scratch;
      this.buffer = scratch.output;
    }

    /** Per-thread arrays for ordering the keys of objects, reused across calls. */
    Scratch scratch() {
      return scratch;
    }

    void append(char c) {
      if (c < 0x80) {
        ensure(1);
        buffer[size++] = (byte) c;
      } else {
        appendNonAscii(c, (char) 0);
      }
    }

    void append(String s) {
      append(s, 0, s.length());
    }

    void append(CharSequence s, int start, int end) {
      ensure(end - start);
      for (int i = start; i < end; i++) {
        char c = s.charAt(i);
        if (c < 0x80) {
          buffer[size++] = (byte) c;
        } else {
          if (appendNonAscii(c, i + 1 < end ? s.charAt(i + 1) : 0)) {
            i++;
          }
          ensure(end - i);
        }
      }
    }

    /** {@code s[start, end)}, known to be all ASCII. */
    @SuppressWarnings("deprecation") // copies the low byte of each char: exact for ASCII, and fast
    void appendAscii(String s, int start, int end) {
      ensure(end - start);
      s.getBytes(start, end, buffer, size);
      size += end - start;
    }

    /** Appends {@code c}, or {@code c} and {@code next} when they are a surrogate pair; says whether they were. */
    private boolean appendNonAscii(char c, char next) {
      ensure(4);
      if (c < 0x800) {
        buffer[size++] = (byte) (0xC0 | c >> 6);
        buffer[size++] = (byte) (0x80 | c & 0x3F);
        return false;
      }
      if (Character.isHighSurrogate(c) && Character.isLowSurrogate(next)) {
        int codePoint = Character.toCodePoint(c, next);
        buffer[size++] = (byte) (0xF0 | codePoint >> 18);
        buffer[size++] = (byte) (0x80 | codePoint >> 12 & 0x3F);
        buffer[size++] = (byte) (0x80 | codePoint >> 6 & 0x3F);
        buffer[size++] = (byte) (0x80 | codePoint & 0x3F);
        return true;
      }
      char bmp = Character.isSurrogate(c) ? '\uFFFD' : c;
      buffer[size++] = (byte) (0xE0 | bmp >> 12);
      buffer[size++] = (byte) (0x80 | bmp >> 6 & 0x3F);
      buffer[size++] = (byte) (0x80 | bmp & 0x3F);
      return false;
    }

    private void ensure(int more) {
      if (size + more > buffer.length) {
        buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, size + more));
      }
    }

    /** Whether the output is {@code expected}; the buffer goes back to the thread either way. */
    boolean matches(String expected) {
      boolean same = sameAs(expected);
      scratch.keepOutput(buffer);
      return same;
    }

    long fingerprint() {
      long hash = 0xcbf29ce484222325L;
      for (int i = 0; i < size; i++) {
        hash ^= buffer[i] & 0xff;
        hash *= 0x100000001b3L;
      }
      scratch.keepOutput(buffer);
      return hash;
    }

    private boolean sameAs(String expected) {
      int length = expected.length();
      if (size != length) {
        // UTF-8 takes more bytes than UTF-16 chars only for text beyond ASCII, which is compared decoded.
        return size > length && !ascii() && new String(buffer, 0, size, StandardCharsets.UTF_8).equals(expected);
      }
      for (int i = 0; i < length; i++) {
        if (buffer[i] != expected.charAt(i)) {
          return false; // a byte of a multi-byte sequence is negative and never equals a char
        }
      }
      return true;
    }

    private boolean ascii() {
      for (int i = 0; i < size; i++) {
        if (buffer[i] < 0) {
          return false;
        }
      }
      return true;
    }

    String text() {
      String text = new String(buffer, 0, size, StandardCharsets.UTF_8);
      scratch.keepOutput(buffer);
      return text;
    }

    byte[] bytes() {
      byte[] bytes = Arrays.copyOf(buffer, size);
      scratch.keepOutput(buffer);
      return bytes;
    }
  }

  private static void write(JsonNode node, Utf8Out out, int depth) {
    switch (node.getNodeType()) {
      case OBJECT -> writeObject(node, out, depth);
      case ARRAY -> writeArray(node, out, depth);
      case STRING -> writeString(node.stringValue(), out);
      case NUMBER -> writeNumber(node, out);
      case BOOLEAN -> out.append(node.booleanValue() ? "true" : "false");
      case NULL, MISSING -> out.append("null");
      case BINARY -> writeString(Base64.getEncoder().encodeToString(node.binaryValue()), out);
      default -> throw new IllegalArgumentException("cannot serialize a " + node.getNodeType() + " node as JSON");
    }
  }

  private static void writeObject(JsonNode node, Utf8Out out, int depth) {
    int size = node.size();
    if (size == 0) {
      out.append("{}");
      return;
    }
    out.append('{');
    if (keysSorted(node)) {
      boolean first = true;
      for (Map.Entry<String, JsonNode> entry : node.properties()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        writeMember(entry.getKey(), entry.getValue(), out, depth);
      }
    } else {
      String[] keys = out.scratch().keys(depth, size);
      int count = 0;
      for (String key : node.propertyNames()) {
        keys[count++] = key;
      }
      Arrays.sort(keys, 0, count, CODE_POINT_ORDER);
      try {
        for (int i = 0; i < count; i++) {
          if (i > 0) {
            out.append(',');
          }
          writeMember(keys[i], node.get(keys[i]), out, depth);
        }
      } finally {
        Arrays.fill(keys, 0, count, null); // do not keep the caller's keys reachable
      }
    }
    out.append('}');
  }

  private static void writeMember(String key, JsonNode value, Utf8Out out, int depth) {
    writeString(key, out);
    out.append(':');
    write(value, out, depth + 1);
  }

  /**
   * Per-thread buffers: key arrays, one per nesting depth (a member is written while its parent's keys are in
   * use), and the output bytes.
   */
  private static final class Scratch {
    private static final ThreadLocal<Scratch> PER_THREAD = ThreadLocal.withInitial(Scratch::new);
    /** A larger output buffer is not kept: one huge object must not pin its size to the thread forever. */
    private static final int MAX_KEPT_OUTPUT = 1 << 20;

    private String[][] byDepth = new String[16][];
    private byte[] output = new byte[4096];

    static Scratch get() {
      return PER_THREAD.get();
    }

    String[] keys(int depth, int size) {
      if (depth >= byDepth.length) {
        byDepth = Arrays.copyOf(byDepth, Math.max(depth + 1, byDepth.length * 2));
      }
      String[] keys = byDepth[depth];
      if (keys == null || keys.length < size) {
        keys = new String[Math.max(size, 16)];
        byDepth[depth] = keys;
      }
      return keys;
    }

    void keepOutput(byte[] grown) {
      if (grown.length <= MAX_KEPT_OUTPUT) {
        output = grown;
      }
    }
  }

  /** Objects read from the API server usually have sorted keys already; then no sort (or array) is needed. */
  private static boolean keysSorted(JsonNode node) {
    String previous = null;
    for (String key : node.propertyNames()) {
      if (previous != null && compareCodePoints(previous, key) > 0) {
        return false;
      }
      previous = key;
    }
    return true;
  }

  private static void writeArray(JsonNode node, Utf8Out out, int depth) {
    out.append('[');
    int size = node.size();
    for (int i = 0; i < size; i++) {
      if (i > 0) {
        out.append(',');
      }
      write(node.get(i), out, depth + 1);
    }
    out.append(']');
  }

  /** Most strings are plain ASCII: one scan and one copy; the rest are escaped by {@link #writeEscaped}. */
  private static void writeString(String s, Utf8Out out) {
    out.append('"');
    int length = s.length();
    int plain = 0;
    while (plain < length) {
      char c = s.charAt(plain);
      if (c >= 0x80 || ESCAPED_ASCII[c]) {
        break;
      }
      plain++;
    }
    if (plain == length) {
      out.appendAscii(s, 0, length);
    } else {
      writeEscaped(s, plain, out);
    }
    out.append('"');
  }

  /** The characters of {@code s}, escaped; {@code s[0, from)} is known to be plain ASCII. */
  private static void writeEscaped(String s, int from, Utf8Out out) {
    int length = s.length();
    int start = 0;
    boolean ascii = true; // whether s[start, i) is all ASCII
    for (int i = from; i < length; i++) {
      char c = s.charAt(i);
      String escape;
      if (c < 0x80) {
        if (!ESCAPED_ASCII[c]) {
          continue;
        }
        escape = shortEscape(c);
      } else if (c == '\u2028' || c == '\u2029') {
        escape = null;
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i + 1 < length && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          ascii = false;
          continue;
        }
        escape = "\uFFFD";
      } else {
        ascii = false;
        continue;
      }
      appendRun(s, start, i, ascii, out);
      if (escape == null) {
        appendUnicodeEscape(c, out);
      } else {
        out.append(escape);
      }
      start = i + 1;
      ascii = true;
    }
    appendRun(s, start, length, ascii, out);
  }

  private static void appendRun(String s, int start, int end, boolean ascii, Utf8Out out) {
    if (ascii) {
      out.appendAscii(s, start, end);
    } else {
      out.append(s, start, end);
    }
  }

  /** The two-character escape of {@code c}, or {@code null} when Go writes it as <code>&#92;u00XX</code>. */
  private static @Nullable String shortEscape(char c) {
    return switch (c) {
      case '"' -> "\\\"";
      case '\\' -> "\\\\";
      case '\b' -> "\\b";
      case '\f' -> "\\f";
      case '\n' -> "\\n";
      case '\r' -> "\\r";
      case '\t' -> "\\t";
      default -> null;
    };
  }

  private static boolean[] escapedAscii() {
    boolean[] escaped = new boolean[0x80];
    for (char c = 0; c < 0x20; c++) {
      escaped[c] = true;
    }
    for (char c : new char[] {'"', '\\', '<', '>', '&'}) {
      escaped[c] = true;
    }
    return escaped;
  }

  private static void appendUnicodeEscape(char c, Utf8Out out) {
    out.append('\\');
    out.append('u');
    out.append(HEX[(c >> 12) & 0xF]);
    out.append(HEX[(c >> 8) & 0xF]);
    out.append(HEX[(c >> 4) & 0xF]);
    out.append(HEX[c & 0xF]);
  }

  private static void writeNumber(JsonNode node, Utf8Out out) {
    if (node.isIntegralNumber() && node.canConvertToLong()) {
      appendLong(node.longValue(), out);
    } else {
      StringBuilder text = new StringBuilder(24);
      appendGoFloat(node.doubleValue(), text);
      out.append(text, 0, text.length());
    }
  }

  /** Decimal digits of {@code value}, without allocating for the common small values. */
  private static void appendLong(long value, Utf8Out out) {
    if (value == Long.MIN_VALUE) {
      out.append("-9223372036854775808");
      return;
    }
    if (value < 0) {
      out.append('-');
      value = -value;
    }
    long divisor = 1;
    while (divisor <= value / 10) {
      divisor *= 10;
    }
    for (; divisor > 0; divisor /= 10) {
      out.append((char) ('0' + (value / divisor) % 10));
    }
  }

  /** Go's {@code encoding/json} float64 encoding: shortest round-trip digits, 'f' or 'e' format by magnitude. */
  static void appendGoFloat(double value, StringBuilder out) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      throw new IllegalArgumentException("JSON cannot represent " + value);
    }
    if (value == 0) {
      out.append(1 / value < 0 ? "-0" : "0");
      return;
    }
    ShortestDecimal d = ShortestDecimal.of(value);
    double abs = Math.abs(value);
    if (abs < EXPONENT_FORMAT_BELOW || abs >= EXPONENT_FORMAT_ABOVE) {
      // strconv writes at least two exponent digits; encoding/json then trims "e-09" to "e-9". Positive
      // exponents here are at least 21, so one minimum digit reproduces both.
      d.appendExponentForm(out, 1);
    } else {
      d.appendPlainForm(out);
    }
  }

  /**
   * Go's {@code fmt.Sprintf("%v", float64)}: shortest digits, exponent form when the decimal exponent is below
   * -4 or at least 6. Metacontroller uses this to turn a numeric merge key (a port, say) into a map key.
   */
  static String goFormatV(double value) {
    if (Double.isNaN(value)) {
      return "NaN";
    }
    if (Double.isInfinite(value)) {
      return value > 0 ? "+Inf" : "-Inf";
    }
    if (value == 0) {
      return 1 / value < 0 ? "-0" : "0";
    }
    ShortestDecimal d = ShortestDecimal.of(value);
    StringBuilder out = new StringBuilder(24);
    int exponent = d.pointPosition - 1;
    if (exponent < -4 || exponent >= 6) {
      d.appendExponentForm(out, 2);
    } else {
      d.appendPlainForm(out);
    }
    return out.toString();
  }

  /**
   * The shortest decimal that reads back as the same double, choosing the one nearest the exact binary value
   * when several of that length exist: what Go's strconv produces with precision -1.
   *
   * @param digits significant digits without leading or trailing zeros
   * @param pointPosition where the decimal point goes relative to the digits ({@code 0.digits × 10^pointPosition})
   */
  private record ShortestDecimal(boolean negative, String digits, int pointPosition) {

    static ShortestDecimal of(double value) {
      BigDecimal exact = new BigDecimal(value);
      for (int precision = 1; precision <= 17; precision++) {
        BigDecimal candidate = roundTrip(exact, precision, RoundingMode.HALF_EVEN, value);
        if (candidate == null) {
          // The nearest candidate may miss the round-trip interval on its narrow side (at powers of two);
          // the other neighbour of the same length may still hit it.
          candidate = roundTrip(exact, precision, RoundingMode.UP, value);
          if (candidate == null) {
            candidate = roundTrip(exact, precision, RoundingMode.DOWN, value);
          }
        }
        if (candidate != null) {
          return from(value < 0, candidate);
        }
      }
      return from(value < 0, exact.round(new MathContext(17, RoundingMode.HALF_EVEN)));
    }

    private static @Nullable BigDecimal roundTrip(BigDecimal exact, int precision, RoundingMode mode, double value) {
      BigDecimal candidate = exact.round(new MathContext(precision, mode));
      return candidate.doubleValue() == value ? candidate : null;
    }

    private static ShortestDecimal from(boolean negative, BigDecimal decimal) {
      BigDecimal stripped = decimal.abs().stripTrailingZeros();
      String digits = stripped.unscaledValue().toString();
      int pointPosition = digits.length() - stripped.scale();
      return new ShortestDecimal(negative, digits, pointPosition);
    }

    void appendPlainForm(StringBuilder out) {
      if (negative) {
        out.append('-');
      }
      if (pointPosition <= 0) {
        out.append("0.");
        out.append("0".repeat(-pointPosition));
        out.append(digits);
      } else if (pointPosition >= digits.length()) {
        out.append(digits);
        out.append("0".repeat(pointPosition - digits.length()));
      } else {
        out.append(digits, 0, pointPosition).append('.').append(digits, pointPosition, digits.length());
      }
    }

    /** {@code d.ddde±X}: mantissa digits, then the exponent padded with zeros to {@code minExponentDigits}. */
    void appendExponentForm(StringBuilder out, int minExponentDigits) {
      if (negative) {
        out.append('-');
      }
      out.append(digits.charAt(0));
      if (digits.length() > 1) {
        out.append('.').append(digits, 1, digits.length());
      }
      int exponent = pointPosition - 1;
      out.append('e').append(exponent < 0 ? '-' : '+');
      String magnitude = Integer.toString(Math.abs(exponent));
      out.append("0".repeat(Math.max(0, minExponentDigits - magnitude.length()))).append(magnitude);
    }
  }

  private static int compareCodePoints(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        if (x >= Character.MIN_SURROGATE && y >= Character.MIN_SURROGATE) {
          // UTF-16 puts surrogates (supplementary code points) below U+E000..U+FFFF; code points do not.
          return codePointRank(x) - codePointRank(y);
        }
        return x - y;
      }
    }
    return a.length() - b.length();
  }

  private static int codePointRank(char c) {
    return Character.isSurrogate(c) ? c + 0x2000 : c - 0x800;
  }
}
