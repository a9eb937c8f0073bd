package dev.metareactor.http;

import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.SerializableString;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.sym.PropertyNameMatcher;
import tools.jackson.core.util.JsonParserDelegate;

/**
 * A parser that weighs the {@code JsonNode} tree being built from it, token by token, and charges that weight to
 * the answer's share of {@link AnswerMemory} as it grows — so an answer whose tree would take more than the budget
 * has left fails while it is parsed, before the tree exists, rather than after.
 *
 * <p>The weight estimates the heap the tree retains on a 64-bit JVM with compressed references (heaps below
 * 32 GB), from Jackson 3's node classes: an object node with its {@code LinkedHashMap} 88 bytes, each of its
 * members 48 (map entry and table slot) plus the property name's {@code String}; an array node with its
 * {@code ArrayList} 56 bytes, each element 6 (a reference and the list's spare room); a string value 16 + 24 + its
 * bytes (Latin-1 or UTF-16, as the JVM keeps it); integers 16 (24 for longs; none for the cached -1 to 10),
 * floating-point numbers 24; {@code true}, {@code false} and {@code null} nothing (shared instances). It counts
 * every property name as a string of its own, although the parser shares repeated names, so that an answer of
 * millions of distinct names is not underestimated. Measured against the real retained heap of realistic and
 * hostile answers it is within 0.95 to 1.32 of it, but for arrays of small integers (shared instances,
 * overestimated 2.3 times); see {@code benchmarks/README.md} ("HookAnswerMemory").
 *
 * <p>Jackson's tree deserializer reads with {@link #nextToken()} and {@link #nextName()}; every other way of
 * moving on is weighed too, so nothing is skipped whatever reads it.
 */
final class WeighedParser extends JsonParserDelegate {

  static final int OBJECT = 88;
  static final int MEMBER = 48;
  static final int ARRAY = 56;
  static final int ELEMENT = 6;
  private static final int STRING = 16 + 24;
  private static final int INT = 16;
  private static final int LONG = 24;
  private static final int FLOAT = 24;
  /** Weight is charged to the budget once this much has gathered: a counter update per few hundred tokens. */
  private static final int CHARGE_EVERY = 16 << 10;

  private final AnswerMemory.Charge charge;
  private long weight;
  private long uncharged;

  WeighedParser(JsonParser parser, AnswerMemory.Charge charge) {
    super(parser);
    this.charge = charge;
  }

  /** The weight of everything read so far; all of it charged once {@link #chargeRest()} has run. */
  long weight() {
    return weight;
  }

  /** Charges what is left (the end of the document). */
  void chargeRest() {
    if (uncharged > 0) {
      long rest = uncharged;
      uncharged = 0;
      charge.add(rest);
    }
  }

  @Override
  public JsonToken nextToken() {
    JsonToken token = super.nextToken();
    weigh(token);
    return token;
  }

  @Override
  public JsonToken nextValue() {
    JsonToken token = nextToken();
    return token == JsonToken.PROPERTY_NAME ? nextToken() : token;
  }

  @Override
  public String nextName() {
    String name = super.nextName();
    weigh(currentToken());
    return name;
  }

  @Override
  public boolean nextName(SerializableString expected) {
    boolean matches = super.nextName(expected);
    weigh(currentToken());
    return matches;
  }

  @Override
  public int nextNameMatch(PropertyNameMatcher matcher) {
    int match = super.nextNameMatch(matcher);
    weigh(currentToken());
    return match;
  }

  private void weigh(JsonToken token) {
    if (token == null) {
      return;
    }
    long bytes = switch (token) {
      case START_OBJECT -> OBJECT + slot(true);
      case START_ARRAY -> ARRAY + slot(true);
      case PROPERTY_NAME -> MEMBER + string(currentName().length(), isLatin1(currentName()));
      case VALUE_STRING -> value(stringValue());
      case VALUE_NUMBER_INT -> value(integer());
      case VALUE_NUMBER_FLOAT -> value(FLOAT);
      case VALUE_TRUE, VALUE_FALSE, VALUE_NULL, VALUE_EMBEDDED_OBJECT -> value(0);
      default -> 0;
    };
    weight += bytes;
    uncharged += bytes;
    if (uncharged >= CHARGE_EVERY) {
      chargeRest();
    }
  }

  private long value(long own) {
    return own + slot(false);
  }

  /** An array element's slot; an object member's is counted with its name. */
  private long slot(boolean structure) {
    TokenStreamContext context = streamReadContext();
    TokenStreamContext container = structure ? context.getParent() : context;
    return container != null && container.inArray() ? ELEMENT : 0;
  }

  private long stringValue() {
    int length = getStringLength();
    if (length == 0) {
      return 0;
    }
    char[] chars = getStringCharacters();
    int offset = getStringOffset();
    boolean latin1 = true;
    for (int i = offset; i < offset + length && latin1; i++) {
      latin1 = chars[i] <= 0xFF;
    }
    return STRING + bytes(length, latin1);
  }

  private long integer() {
    return switch (getNumberType()) {
      case INT -> {
        int value = getIntValue();
        yield value >= -1 && value <= 10 ? 0 : INT;
      }
      case LONG -> LONG;
      default -> 56 + getString().length();
    };
  }

  /** A {@code String} of its own: 24 bytes and its array. */
  private static long string(int length, boolean latin1) {
    return 24 + bytes(length, latin1);
  }

  /** A byte array of a string's characters, header and alignment included. */
  private static long bytes(int length, boolean latin1) {
    long data = 16L + (latin1 ? length : 2L * length);
    return (data + 7) & ~7L;
  }

  private static boolean isLatin1(String text) {
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) > 0xFF) {
        return false;
      }
    }
    return true;
  }
}
