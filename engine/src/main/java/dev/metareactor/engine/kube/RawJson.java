package dev.metareactor.engine.kube;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import tools.jackson.core.SerializableString;

/**
 * JSON that is already UTF-8 bytes, for {@link tools.jackson.databind.util.RawValue}: Jackson's UTF-8 generator
 * appends the bytes to its buffer as they are ({@link #appendUnquotedUTF8}); only a character-based writer needs
 * the text, which is decoded then. Unquoted forms only: it is a value, never a name or a string.
 */
final class RawJson implements SerializableString {

  private final byte[] utf8;

  RawJson(byte[] utf8) {
    this.utf8 = utf8;
  }

  @Override
  public String getValue() {
    return new String(utf8, StandardCharsets.UTF_8);
  }

  @Override
  public int charLength() {
    return getValue().length();
  }

  /** The bytes themselves: Jackson only reads them. */
  @Override
  public byte[] asUnquotedUTF8() {
    return utf8;
  }

  @Override
  public int appendUnquotedUTF8(byte[] buffer, int offset) {
    if (offset + utf8.length > buffer.length) {
      return -1; // the generator flushes and writes asUnquotedUTF8() instead
    }
    System.arraycopy(utf8, 0, buffer, offset, utf8.length);
    return utf8.length;
  }

  @Override
  public int appendUnquoted(char[] buffer, int offset) {
    String value = getValue();
    if (offset + value.length() > buffer.length) {
      return -1;
    }
    value.getChars(0, value.length(), buffer, offset);
    return value.length();
  }

  @Override
  public int writeUnquotedUTF8(OutputStream out) throws IOException {
    out.write(utf8);
    return utf8.length;
  }

  @Override
  public int putUnquotedUTF8(ByteBuffer buffer) {
    if (buffer.remaining() < utf8.length) {
      return -1;
    }
    buffer.put(utf8);
    return utf8.length;
  }

  // A raw value is never quoted; these are here because the interface demands them.

  @Override
  public char[] asQuotedChars() {
    throw new UnsupportedOperationException("raw JSON is never quoted");
  }

  @Override
  public byte[] asQuotedUTF8() {
    throw new UnsupportedOperationException("raw JSON is never quoted");
  }

  @Override
  public int appendQuotedUTF8(byte[] buffer, int offset) {
    throw new UnsupportedOperationException("raw JSON is never quoted");
  }

  @Override
  public int appendQuoted(char[] buffer, int offset) {
    throw new UnsupportedOperationException("raw JSON is never quoted");
  }

  @Override
  public int writeQuotedUTF8(OutputStream out) {
    throw new UnsupportedOperationException("raw JSON is never quoted");
  }

  @Override
  public int putQuotedUTF8(ByteBuffer buffer) {
    throw new UnsupportedOperationException("raw JSON is never quoted");
  }
}
