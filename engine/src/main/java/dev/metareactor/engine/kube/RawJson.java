package dev.metareactor.engine.kube;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import tools.jackson.core.SerializableString;

/**
 * JSON that is already UTF-8 bytes, a cached object's {@link StoredJson}, for {@link
 * tools.jackson.databind.util.RawValue}: Jackson's UTF-8 generator has the bytes put into its buffer as they are,
 * inflated straight into it when they are kept deflated ({@link #appendUnquotedUTF8}); only a character-based writer
 * needs the text, which is decoded then. Unquoted forms only: it is a value, never a name or a string.
 */
final class RawJson implements SerializableString {

  private final StoredJson json;

  RawJson(StoredJson json) {
    this.json = json;
  }

  @Override
  public String getValue() {
    return new String(json.bytes(), StandardCharsets.UTF_8);
  }

  @Override
  public int charLength() {
    return getValue().length();
  }

  /** The bytes themselves (or, deflated, a fresh copy): Jackson only reads them. */
  @Override
  public byte[] asUnquotedUTF8() {
    return json.bytes();
  }

  @Override
  public int appendUnquotedUTF8(byte[] buffer, int offset) {
    if (offset + json.length() > buffer.length) {
      return -1; // the generator flushes and writes asUnquotedUTF8() instead
    }
    json.copyInto(buffer, offset);
    return json.length();
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
    out.write(json.bytes());
    return json.length();
  }

  @Override
  public int putUnquotedUTF8(ByteBuffer buffer) {
    if (buffer.remaining() < json.length()) {
      return -1;
    }
    buffer.put(json.bytes());
    return json.length();
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
