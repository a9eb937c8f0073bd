package dev.metareactor.engine.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import dev.metareactor.engine.config.LogSettings.TimeEncoding;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.slf4j.event.KeyValuePair;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Lines as Metacontroller's zap writes them. */
class ZapJsonEncoderTest {

  private static final Instant AT = Instant.parse("2026-11-23T17:25:24.123456789Z");
  private final LoggerContext context = new LoggerContext();

  private LoggingEvent event(Level level, String message, Object[] arguments, Throwable thrown) {
    LoggingEvent event = new LoggingEvent(ZapJsonEncoderTest.class.getName(),
        context.getLogger("dev.metareactor.engine.server.LeaderElection"), level, message, thrown, arguments);
    event.setInstant(AT);
    return event;
  }

  private static String encode(ZapJsonEncoder encoder, LoggingEvent event) {
    return new String(encoder.encode(event), StandardCharsets.UTF_8);
  }

  @Test
  void theLeaseLinesAreUpstreamsCharacterForCharacter() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC);
    LoggingEvent acquired = event(Level.INFO, "Successfully acquired lease", null, null);
    acquired.addKeyValuePair(new KeyValuePair("lock", "default/metacontroller"));

    // Metacontroller v4.17.2's line, as its binary printed it on the same day (only the time differs).
    assertThat(encode(encoder, acquired)).isEqualTo("{\"level\":\"info\",\"ts\":\"2026-11-23T17:25:24Z\","
        + "\"msg\":\"Successfully acquired lease\",\"lock\":\"default/metacontroller\"}\n");
  }

  @Test
  void messagesAreFormattedAndEscapedAndExceptionsBecomeErrorAndStacktrace() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC);
    String line = encode(encoder, event(Level.ERROR, "sync of {} failed: \"{}\"",
        new Object[] {"ns/a", "line\nbreak"}, new IllegalStateException("boom")));

    assertThat(line).endsWith("}\n").doesNotContain("\n}");
    JsonNode json = JsonMapper.builder().build().readTree(line);
    assertThat(json.path("level").asString()).isEqualTo("error");
    assertThat(json.path("msg").asString()).isEqualTo("sync of ns/a failed: \"line\nbreak\"");
    assertThat(json.path("error").asString()).isEqualTo("java.lang.IllegalStateException: boom");
    assertThat(json.path("stacktrace").asString()).startsWith("java.lang.IllegalStateException: boom\n\tat ");
  }

  @Test
  void belowTheStacktraceLevelAnExceptionIsItsClassAndMessageAlone() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC, Level.ERROR);
    JsonNode json = JsonMapper.builder().build().readTree(encode(encoder,
        event(Level.WARN, "sync failed", null, new IllegalStateException("boom"))));

    assertThat(json.path("error").asString()).isEqualTo("java.lang.IllegalStateException: boom");
    assertThat(json.has("stacktrace")).isFalse();
  }

  @Test
  void atTheStacktraceLevelALineWithoutAnExceptionCarriesWhereItWasLogged() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC, Level.INFO);
    JsonNode json = JsonMapper.builder().build().readTree(Logging.info(encoder, context));

    assertThat(json.has("error")).isFalse();
    assertThat(json.path("stacktrace").asString())
        .startsWith("at " + ZapJsonEncoderTest.class.getName() + ".atTheStacktraceLevelALineWithoutAnExceptionCarr");
  }

  /** Stands in for the logger: a line's caller is the first frame after the logger's (as Logback finds it). */
  private static final class Logging {
    static String info(ZapJsonEncoder encoder, LoggerContext context) {
      LoggingEvent event = new LoggingEvent(Logging.class.getName(),
          context.getLogger("dev.metareactor.engine.server.Engine"), Level.INFO, "started", null, null);
      return encode(encoder, event);
    }
  }

  @Test
  void offMeansNoStackTraceEvenForAnError() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC, Level.OFF);
    JsonNode json = JsonMapper.builder().build().readTree(encode(encoder,
        event(Level.ERROR, "failed", null, new IllegalStateException("boom"))));

    assertThat(json.path("error").asString()).isEqualTo("java.lang.IllegalStateException: boom");
    assertThat(json.has("stacktrace")).isFalse();
  }

  @Test
  void consoleLinesFollowTheStacktraceLevelToo() {
    ConsoleEncoder encoder = new ConsoleEncoder(Level.ERROR);
    encoder.setContext(context);
    encoder.start();
    String warn = new String(encoder.encode(event(Level.WARN, "sync of {} failed", new Object[] {"ns/a"},
        new IllegalStateException("boom"))), StandardCharsets.UTF_8);
    String error = new String(encoder.encode(event(Level.ERROR, "sync of {} failed", new Object[] {"ns/a"},
        new IllegalStateException("boom"))), StandardCharsets.UTF_8);

    assertThat(warn).endsWith(" - sync of ns/a failed error=\"java.lang.IllegalStateException: boom\"\n");
    assertThat(error).contains(" - sync of ns/a failed\njava.lang.IllegalStateException: boom\n\tat ")
        .doesNotContain("error=");
  }

  @Test
  void linesOfOtherLoggersNameTheirClassAsLoggerBeforeMsg() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC);
    LoggingEvent event = new LoggingEvent(ZapJsonEncoderTest.class.getName(),
        context.getLogger("dev.metareactor.engine.controller.composite.CompositeController"), Level.WARN,
        "sync of {} failed", null, new Object[] {"ns/a"});
    event.setInstant(AT);
    event.addKeyValuePair(new KeyValuePair("key", "ns/a"));

    assertThat(encode(encoder, event)).isEqualTo("{\"level\":\"warn\",\"ts\":\"2026-11-23T17:25:24Z\","
        + "\"logger\":\"CompositeController\",\"msg\":\"sync of ns/a failed\",\"key\":\"ns/a\"}\n");
  }

  @Test
  void keyValuesKeepTheirJsonTypesAndLevelsHaveZapsNames() {
    ZapJsonEncoder encoder = new ZapJsonEncoder(TimeEncoding.RFC3339, ZoneOffset.UTC);
    LoggingEvent event = event(Level.TRACE, "m", null, null);
    event.addKeyValuePair(new KeyValuePair("count", 3));
    event.addKeyValuePair(new KeyValuePair("ok", true));
    event.addKeyValuePair(new KeyValuePair("ratio", 0.5));
    event.addKeyValuePair(new KeyValuePair("none", null));

    assertThat(encode(encoder, event)).isEqualTo("{\"level\":\"debug\",\"ts\":\"2026-11-23T17:25:24Z\","
        + "\"msg\":\"m\",\"count\":3,\"ok\":true,\"ratio\":0.5,\"none\":null}\n");
    assertThat(encode(encoder, event(Level.WARN, "m", null, null))).startsWith("{\"level\":\"warn\",");
  }

  @Test
  void theTimeIsWrittenAsZapTimeEncodingSays() {
    LoggingEvent event = event(Level.INFO, "m", null, null);
    assertThat(encode(new ZapJsonEncoder(TimeEncoding.RFC3339_NANO, ZoneOffset.UTC), event))
        .contains("\"ts\":\"2026-11-23T17:25:24.123456789Z\"");
    assertThat(encode(new ZapJsonEncoder(TimeEncoding.ISO8601, ZoneId.of("Europe/Berlin")), event))
        .contains("\"ts\":\"2026-11-23T18:25:24.123+0100\"");
    assertThat(encode(new ZapJsonEncoder(TimeEncoding.NANO, ZoneOffset.UTC), event))
        .contains("\"ts\":" + (AT.getEpochSecond() * 1_000_000_000L + AT.getNano()) + ",");
    JsonNode epoch = JsonMapper.builder().build()
        .readTree(encode(new ZapJsonEncoder(TimeEncoding.EPOCH, ZoneOffset.UTC), event));
    assertThat(epoch.path("ts").asDouble()).isCloseTo(AT.getEpochSecond() + 0.123456789, within());
    JsonNode millis = JsonMapper.builder().build()
        .readTree(encode(new ZapJsonEncoder(TimeEncoding.MILLIS, ZoneOffset.UTC), event));
    assertThat(millis.path("ts").asDouble()).isCloseTo(AT.toEpochMilli() + 0.456789, within());
  }

  private static Offset<Double> within() {
    return Offset.offset(1e-3);
  }
}
