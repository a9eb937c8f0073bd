package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.fail;
import static dev.metareactor.http.Fixtures.request;
import static dev.metareactor.http.Fixtures.succeed;
import static dev.metareactor.http.ScriptedServer.ok;
import static dev.metareactor.http.ScriptedServer.silent;
import static dev.metareactor.http.ScriptedServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.http.HookCallException.Reason;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest extends ScriptedHookTest {

  /** No retries, so each call is one attempt; opens after 4 calls with at least half failed; 30 s open. */
  private static final HookClientOptions OPTIONS = HookClientOptions.DEFAULTS
      .withRetry(new HookClientOptions.RetryOptions(1, Duration.ofMillis(1), 1.0, 0.0, Duration.ofMillis(1)))
      .withBreaker(new HookClientOptions.BreakerOptions(50, 4, 4, Duration.ofSeconds(30), 2));

  @Override
  protected HookClientOptions clientOptions() {
    return OPTIONS;
  }

  private Hook hook(Duration timeout, ScriptedServer.Reply... script) {
    return hook(spec -> spec.withTimeout(timeout), script);
  }

  @Test
  void opensOnOutagesFailsFastThenHalfOpensAndRecovers() {
    Hook hook = hook(Duration.ofSeconds(10), status(503, "down"));
    for (int i = 0; i < 4; i++) {
      assertThat(fail(hook.call(request(), ROOT)).reason()).isEqualTo(Reason.STATUS);
    }
    assertThat(hook.breakerState()).isEqualTo(State.OPEN);

    HookCallException fastFailure = fail(hook.call(request(), ROOT));

    assertThat(fastFailure.reason()).isEqualTo(Reason.CIRCUIT_OPEN);
    assertThat(fastFailure.attempts()).isZero();
    assertThat(fastFailure.breakerState()).hasValue(State.OPEN);
    assertThat(fastFailure).hasMessageEndingWith(
        "circuit breaker is open, failing fast without calling the hook (attempts: 0, circuit breaker: OPEN)");
    assertThat(server.requests()).as("the open breaker kept the call off the network").hasSize(4);
    assertThat(meters.get("resilience4j.circuitbreaker.not.permitted.calls").counter().count()).isEqualTo(1.0);

    server.serve(ok("{\"back\":true}"));
    clock.advance(Duration.ofSeconds(31));
    succeed(hook.call(request(), ROOT));
    assertThat(hook.breakerState()).isEqualTo(State.HALF_OPEN);
    succeed(hook.call(request(), ROOT));

    assertThat(hook.breakerState()).isEqualTo(State.CLOSED);
    assertThat(server.requests()).hasSize(6);
  }

  @Test
  void aFailedTrialCallOpensItAgain() {
    Hook hook = hook(Duration.ofSeconds(10), status(500, "down"));
    for (int i = 0; i < 4; i++) {
      fail(hook.call(request(), ROOT));
    }
    clock.advance(Duration.ofSeconds(31));

    fail(hook.call(request(), ROOT));
    fail(hook.call(request(), ROOT));

    assertThat(hook.breakerState()).isEqualTo(State.OPEN);
    assertThat(fail(hook.call(request(), ROOT)).reason()).isEqualTo(Reason.CIRCUIT_OPEN);
  }

  @Test
  void aHookThatNeverAnswersOpensItThroughItsTimeouts() {
    Hook hook = hook(Duration.ofMillis(100), silent());

    for (int i = 0; i < 4; i++) {
      assertThat(fail(hook.call(request(), ROOT)).reason()).isEqualTo(Reason.TIMEOUT);
    }

    assertThat(hook.breakerState()).isEqualTo(State.OPEN);
    assertThat(fail(hook.call(request(), ROOT)).reason()).isEqualTo(Reason.CIRCUIT_OPEN);
  }

  @Test
  void clientErrorsAndTooManyRequestsWithADelayNeverOpenIt() {
    Hook hook = hook(Duration.ofSeconds(10), status(400, "bad"), status(422, "invalid"),
        status(429, "", "Retry-After", "5"), ok("not json"), status(404, ""));

    for (int i = 0; i < 8; i++) {
      fail(hook.call(request(), ROOT));
    }

    assertThat(hook.breakerState()).isEqualTo(State.CLOSED);
  }

  @Test
  void tooManyRequestsThatDoNotSayWhenOpenIt() {
    // An overloaded hook that gives no usable delay: absent, zero, garbage, a date in the past.
    Hook hook = hook(Duration.ofSeconds(10), status(429, ""), status(429, "", "Retry-After", "0"),
        status(429, "", "Retry-After", "soon"), status(429, "", "Retry-After", "Sun, 22 Nov 2026 09:00:00 GMT"));

    for (int i = 0; i < 4; i++) {
      HookCallException failure = fail(hook.call(request(), ROOT));
      assertThat(failure).isInstanceOfSatisfying(HookRetryAfterException.class,
          tooMany -> assertThat(tooMany.hasDelay()).isFalse());
    }

    assertThat(hook.breakerState()).isEqualTo(State.OPEN);
    assertThat(fail(hook.call(request(), ROOT)).reason()).isEqualTo(Reason.CIRCUIT_OPEN);
    assertThat(server.requests()).hasSize(4);
  }

  @Test
  void hooksOnTheSameEndpointShareTheBreaker() {
    Hook sync = hook(Duration.ofSeconds(10), status(503, "down"));
    Hook other = client.hook(WebhookSpec.of(server.url("/sync")),
        new HookIdentity("sync", "another-controller", "DecoratorController"));

    for (int i = 0; i < 4; i++) {
      fail(sync.call(request(), ROOT));
    }

    assertThat(fail(other.call(request(), ROOT)).reason()).isEqualTo(Reason.CIRCUIT_OPEN);
  }
}
