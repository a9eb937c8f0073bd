package dev.metareactor.engine.hook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.http.HookCallException;
import dev.metareactor.http.HookClient;
import dev.metareactor.http.HookClientOptions;
import dev.metareactor.http.HookIdentity;
import dev.metareactor.http.WebhookSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A hook's 429: waited out when it says for how long, a failure (backoff, counted) when it does not; each call's
 * request and answer at trace level.
 */
class WebhookCallerTest {

  private static final HookCaller.RootObject ROOT = new HookCaller.RootObject("Widget", "default", "w1");

  private final HookClient client = HookClient.create(HookClientOptions.DEFAULTS, new SimpleMeterRegistry());
  private volatile String retryAfter;
  private final AtomicInteger answers = new AtomicInteger();
  private final DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
      .route(routes -> routes.post("/answer", (request, response) -> request.receive().doOnComplete(
              answers::incrementAndGet).then(
              response.header("Content-Type", "application/json").sendString(Mono.just("{\"status\":{\"n\":1}}"))
                  .then()))
          .post("/sync", (request, response) -> {
        response.status(429);
        if (retryAfter != null) {
          response.header("Retry-After", retryAfter);
        }
        return request.receive().then(response.sendString(Mono.just("slow down")).then());
      }))
      .bindNow();

  @AfterEach
  void close() {
    client.close();
    server.disposeNow();
  }

  private Throwable call() {
    return catchThrowable(() -> caller("/sync").call(JsonMapper.builder().build().readTree("{}"), ROOT)
        .block(Duration.ofSeconds(30)));
  }

  private WebhookCaller caller(String path) {
    return caller(path, WriteFence.OPEN);
  }

  private WebhookCaller caller(String path, WriteFence fence) {
    WebhookCaller caller = new WebhookCaller("not yet", Schedulers.parallel(), fence);
    caller.use(client.hook(WebhookSpec.of("http://127.0.0.1:" + server.port() + path),
        new HookIdentity("sync", "test", "CompositeController")));
    return caller;
  }

  @Test
  void atTraceLevelEachCallsRequestAndAnswerAreLoggedWholeAndBelowItNothing() {
    Logger logger = (Logger) LoggerFactory.getLogger(WebhookCaller.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    Level before = logger.getLevel();
    try {
      WebhookCaller caller = caller("/answer");
      logger.setLevel(Level.DEBUG);
      caller.call(JsonMapper.builder().build().readTree("{\"parent\":{\"a\":1}}"), ROOT)
          .block(Duration.ofSeconds(30));
      assertThat(lines.list).as("at debug").isEmpty();

      logger.setLevel(Level.TRACE);
      caller.call(JsonMapper.builder().build().readTree("{\"parent\":{\"a\":1}}"), ROOT)
          .block(Duration.ofSeconds(30));
      assertThat(lines.list).extracting(ILoggingEvent::getLevel).containsOnly(Level.TRACE);
      assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage).satisfiesExactly(
          request -> assertThat(request).endsWith(": request about Widget default/w1: {\"parent\":{\"a\":1}}"),
          answer -> assertThat(answer).endsWith(": answer about Widget default/w1: {\"status\":{\"n\":1}}"));
    } finally {
      logger.setLevel(before);
      logger.detachAppender(lines);
    }
  }

  /**
   * The fence is asked when the call is subscribed, not when the sync began: a replica stopped in between (its lease
   * gone meanwhile) sends nothing.
   */
  @Test
  void aCallIsNotSentWhenTheFenceRefusesAtTheMomentOfTheCall() {
    AtomicReference<String> refusal = new AtomicReference<>();
    Mono<JsonNode> call = caller("/answer", refusal::get).call(JsonMapper.builder().build().readTree("{}"), ROOT);
    refusal.set("the shard lease was last renewed 27s ago");

    assertThatThrownBy(() -> call.block(Duration.ofSeconds(30))).isInstanceOf(WriteFence.Refused.class)
        .hasMessage("hook call not sent: the shard lease was last renewed 27s ago");
    assertThat(answers.get()).as("requests the hook received").isZero();

    refusal.set(null);
    assertThat(call.block(Duration.ofSeconds(30))).isNotNull();
    assertThat(answers.get()).as("requests the hook received once the fence is open").isOne();
  }

  @Test
  void aTooManyRequestsWithADelayIsARetryAfter() {
    retryAfter = "3";

    assertThat(call()).isInstanceOfSatisfying(RetryAfterException.class,
        retry -> assertThat(retry.delay()).isEqualTo(Duration.ofSeconds(3)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "0", "-5", "soon", "Sun, 06 Nov 1994 08:49:37 GMT"})
  void aTooManyRequestsWithoutAUsableDelayIsAFailureNotACallAgainAtOnce(String header) {
    retryAfter = header.isEmpty() ? null : header;

    Throwable error = call();

    assertThat(error).isInstanceOf(HookCallException.class).isNotInstanceOf(RetryAfterException.class);
    assertThat(error.getMessage()).contains("too many requests", "retrying with backoff");
  }

  @Test
  void aRetryAfterIsNeverZero() {
    assertThatThrownBy(() -> new RetryAfterException(Duration.ZERO, "429"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
  }
}
