package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

class WebhookSpecTest {

  @Test
  void aFullUrlWinsOverServiceAndPath() {
    WebhookSpec spec = WebhookSpec.fromJson(json(
        "{\"url\":\"https://hooks.example.com/sync\",\"service\":"
        + "{\"name\":\"x\",\"namespace\":\"y\"},\"path\":\"/p\"}"));

    assertThat(spec.endpoint().uri()).isEqualTo(URI.create("https://hooks.example.com/sync"));
    assertThat(spec.endpoint().secure()).isTrue();
    assertThat(spec.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(spec.etag().enabled()).isFalse();
    assertThat(spec.auth()).isEmpty();
  }

  @Test
  void aServiceResolvesWithPort80AndHttpByDefault() {
    WebhookSpec spec = WebhookSpec.fromJson(json(
        "{\"service\":{\"name\":\"hooks\",\"namespace\":\"metacontroller\"},\"path\":\"/sync\"}"));

    assertThat(spec.endpoint().toString()).isEqualTo("http://hooks.metacontroller:80/sync");
    assertThat(spec.endpoint().secure()).isFalse();
  }

  @Test
  void aServiceWithPortAndProtocol() {
    WebhookSpec spec = WebhookSpec.fromJson(json(
        "{\"service\":{\"name\":\"hooks\",\"namespace\":\"ns\",\"port\":"
        + "8443,\"protocol\":\"https\"},\"path\":\"/s\"}"));

    assertThat(spec.endpoint().toString()).isEqualTo("https://hooks.ns:8443/s");
  }

  @ParameterizedTest
  @ValueSource(strings = {"{}", "{\"path\":\"/sync\"}", "{\"service\":{\"name\":\"a\",\"namespace\":\"b\"}}"})
  void withoutUrlItNeedsServiceAndPath(String webhook) {
    assertThatThrownBy(() -> WebhookSpec.fromJson(json(webhook)))
        .isInstanceOf(InvalidWebhookException.class)
        .hasMessage("invalid webhook config: must specify either a full 'url', or both 'service' and 'path'");
  }

  @ParameterizedTest
  @ValueSource(strings = {"{\"name\":\"a\"}", "{\"namespace\":\"b\"}", "{\"name\":\"\",\"namespace\":\"b\"}"})
  void aServiceNeedsNameAndNamespace(String service) {
    assertThatThrownBy(() -> WebhookSpec.fromJson(json("{\"service\":" + service + ",\"path\":\"/sync\"}")))
        .isInstanceOf(InvalidWebhookException.class)
        .hasMessage("invalid webhook config: 'service' must specify both 'name' and 'namespace'");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{\"url\":\"ftp://x/sync\"}|must start with http:// or https://",
      "{\"url\":\"http:///sync\"}|has no host",
      "{\"url\":\"http://a b/\"}|is not a valid URL",
      "{\"url\":5}|'url' must be a string",
      "{\"url\":\"http://x/\",\"timeout\":\"10\"}|'timeout': missing unit in duration '10'",
      "{\"url\":\"http://x/\",\"etag\":{\"enabled\":\"yes\"}}|'etag.enabled' must be a boolean",
      "{\"url\":\"http://x/\",\"etag\":{\"cacheTimeoutSeconds\":1.5}}|'etag.cacheTimeoutSeconds' must be a 32-bit"
      + " integer",
      "{\"service\":{\"name\":\"a\",\"namespace\":\"b\",\"port\":\"80\"},\"path\":\"/\"}|'service.port' must be a"
      + " 32-bit",
      "{\"service\":{\"name\":\"a\",\"namespace\":\"b\"},\"path\":\"sync\"}|'path' must start with '/': sync"})
  void rejectsWhatCannotBeCalled(String webhook, String message) {
    assertThatThrownBy(() -> WebhookSpec.fromJson(json(webhook)))
        .isInstanceOf(InvalidWebhookException.class)
        .hasMessageStartingWith("invalid webhook config: ")
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @CsvSource({"10s,10", "1m30s,90", "250ms,0.25", "1h,3600", "0s,10", "-5s,10"})
  void timeoutsAreGoDurationsAndNonPositiveOnesFallBackTo10s(String timeout, double seconds) {
    WebhookSpec spec = WebhookSpec.fromJson(json("{\"url\":\"http://x/\",\"timeout\":\"" + timeout + "\"}"));

    assertThat(spec.timeout()).isEqualTo(Duration.ofMillis(Math.round(seconds * 1000)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"0s", "-5s", "-1m30s"})
  void aNonPositiveTimeoutFallsBackTo10sWithALogLine(String timeout) {
    List<ILoggingEvent> logged = logsOfWebhookSpec(
        () -> assertThat(WebhookSpec.fromJson(json("{\"url\":\"http://x/\",\"timeout\":\"" + timeout + "\"}"))
            .timeout()).isEqualTo(Duration.ofSeconds(10)));

    assertThat(logged).singleElement().satisfies(event -> {
      assertThat(event.getLevel()).isEqualTo(Level.INFO);
      assertThat(event.getFormattedMessage()).isEqualTo("invalid client config: timeout must be a non-zero positive"
          + " duration. Defaulting to 10 seconds (hook http://x/, timeout " + timeout + ")");
    });
  }

  @Test
  void aPositiveTimeoutIsNotLogged() {
    assertThat(logsOfWebhookSpec(() -> WebhookSpec.of("http://x/").withTimeout(Duration.ofSeconds(3)))).isEmpty();
  }

  /** What WebhookSpec logs at INFO and above while {@code action} runs (the tests' root level is WARN). */
  private static List<ILoggingEvent> logsOfWebhookSpec(Runnable action) {
    Logger logger = (Logger) LoggerFactory.getLogger(WebhookSpec.class);
    Level level = logger.getLevel();
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    logger.setLevel(Level.INFO);
    try {
      action.run();
    } finally {
      logger.detachAppender(appender);
      logger.setLevel(level);
    }
    return List.copyOf(appender.list);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "{}|false|-",
      "{\"enabled\":true}|true|-",
      "{\"enabled\":true,\"cacheTimeoutSeconds\":30}|true|30",
      "{\"enabled\":true,\"cacheCleanupSeconds\":30}|true|-",
      "{\"cacheTimeoutSeconds\":30}|false|30",
      "{\"enabled\":true,\"cacheTimeoutSeconds\":0,\"cacheCleanupSeconds\":5}|true|-",
      "{\"enabled\":true,\"cacheTimeoutSeconds\":-1}|true|-",
      "null|false|-"})
  void everyCombinationOfEtagFieldsIsAccepted(String etag, boolean enabled, String ttlSeconds) {
    WebhookSpec spec = WebhookSpec.fromJson(json("{\"url\":\"http://x/\",\"etag\":" + etag + "}"));

    assertThat(spec.etag().enabled()).isEqualTo(enabled);
    assertThat(spec.etag().timeToLive().map(ttl -> Long.toString(ttl.toSeconds())).orElse("-")).isEqualTo(ttlSeconds);
  }

  @Test
  void tlsAndAuthAreAddedByTheEngine() {
    WebhookSpec spec = WebhookSpec.of("https://x/sync")
        .withTls(dev.metareactor.http.tls.TlsMaterials.caBundle("pem"))
        .withAuth(HookAuth.authorization("Token", "abc"));

    assertThat(spec.tls().caBundlePem()).isEqualTo("pem");
    assertThat(spec.auth()).hasValue(new HookAuth("Token abc"));
    assertThat(spec.withAuth(null).auth()).isEmpty();
  }
}
