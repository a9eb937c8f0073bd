package dev.metareactor.engine.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.RetrySettings;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OutcomeAndOptionsTest {

  @Test
  void outcomesCarryTheirKindAndDelay() {
    assertThat(Outcome.success()).isEqualTo(new Outcome(Outcome.Kind.SUCCESS, Duration.ZERO));
    assertThat(Outcome.resyncAfter(Duration.ofSeconds(5)))
        .isEqualTo(new Outcome(Outcome.Kind.SUCCESS, Duration.ofSeconds(5)));
    assertThat(Outcome.retryAfter(Duration.ofSeconds(2)).kind()).isEqualTo(Outcome.Kind.RETRY_AFTER);
    assertThat(Outcome.failed().after()).isZero();
    assertThat(Outcome.cancelled().kind()).isEqualTo(Outcome.Kind.CANCELLED);
  }

  @Test
  void outcomesRejectNegativeDelaysAndDelaysOnFailures() {
    assertThatThrownBy(() -> Outcome.retryAfter(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
    assertThatThrownBy(() -> new Outcome(Outcome.Kind.FAILED, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FAILED takes no delay");
    assertThatThrownBy(() -> new Outcome(null, Duration.ZERO)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void aRetryAfterNeedsADelayOtherwiseItIsAFailure() {
    // "Come back at once" would re-run the key in a hot loop: without a usable delay the run FAILED (backoff).
    assertThatThrownBy(() -> Outcome.retryAfter(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive delay");
  }

  @Test
  void optionsDefaultToClientGosRateLimiter() {
    WorkQueueOptions options = WorkQueueOptions.of("CompositeController-web", "web", 5);

    assertThat(options.retry()).isEqualTo(
        new RetrySettings(Duration.ofMillis(5), Duration.ofSeconds(1000), new RateLimit(10, 100)));
    assertThat(options.workers()).isEqualTo(5);
  }

  @Test
  void optionsAreValidated() {
    assertThatThrownBy(() -> WorkQueueOptions.of("q", "c", 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("workers must be at least 1");
    assertThatThrownBy(() -> WorkQueueOptions.of(" ", "c", 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name must not be blank");
    assertThatThrownBy(() -> WorkQueueOptions.of("q", "", 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("controller must not be blank");
    assertThatThrownBy(() -> new WorkQueueOptions("q", "c", 1, null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void theRateLimiterTakesTheLargerOfBackoffAndBucketWait() {
    long[] now = {0};
    RetryRateLimiter limiter = new RetryRateLimiter(
        new RetrySettings(Duration.ofMillis(5), Duration.ofSeconds(1000), new RateLimit(10, 2)), () -> now[0]);

    assertThat(limiter.backoffNanos(0)).isEqualTo(5_000_000L);
    assertThat(limiter.backoffNanos(3)).isEqualTo(40_000_000L);
    assertThat(limiter.backoffNanos(40)).isEqualTo(1_000_000_000_000L);
    assertThat(limiter.backoffNanos(Integer.MAX_VALUE)).isEqualTo(1_000_000_000_000L);

    assertThat(limiter.delayNanos(0)).as("burst token, backoff wins").isEqualTo(5_000_000L);
    assertThat(limiter.delayNanos(0)).isEqualTo(5_000_000L);
    assertThat(limiter.delayNanos(0)).as("bucket empty: 100ms for the next token").isEqualTo(100_000_000L);
    assertThat(limiter.delayNanos(10)).as("backoff of 5.12s beats the bucket").isEqualTo(5_120_000_000L);
    now[0] = 10_000_000_000L;
    assertThat(limiter.delayNanos(1)).as("refilled").isEqualTo(10_000_000L);
  }
}
