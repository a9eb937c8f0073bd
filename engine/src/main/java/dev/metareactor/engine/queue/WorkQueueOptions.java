package dev.metareactor.engine.queue;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.config.RetrySettings;
import java.time.Duration;
import java.util.Objects;

/**
 * How one {@link KeyedWorkQueue} is set up. Immutable and validated: an instance that exists is usable.
 *
 * @param name the queue's name, the {@code name} tag of its metrics (upstream names its queues
 *     {@code CompositeController-<name>} and {@code DecoratorController-<name>})
 * @param controller the hosted controller the queue serves, the {@code controller} tag of its metrics
 * @param workers how many keys {@link KeyedWorkQueue#process} runs at once ({@code --workers}), at least one
 * @param retry the per-key exponential backoff of failed runs and the overall retry rate of the queue
 */
public record WorkQueueOptions(String name, String controller, int workers, RetrySettings retry) {

  /**
   * client-go's default controller rate limiter: per key 5ms doubling up to 1000s, across keys 10 retries per
   * second with a burst of 100.
   */
  public static final RetrySettings CLIENT_GO_RETRY =
      new RetrySettings(Duration.ofMillis(5), Duration.ofSeconds(1000), new RateLimit(10, 100));

  public WorkQueueOptions {
    requireText(name, "name");
    requireText(controller, "controller");
    if (workers < 1) {
      throw new IllegalArgumentException("workers must be at least 1, got " + workers);
    }
    Objects.requireNonNull(retry, "retry");
  }

  /** A queue with client-go's default retry behaviour. */
  public static WorkQueueOptions of(String name, String controller, int workers) {
    return new WorkQueueOptions(name, controller, workers, CLIENT_GO_RETRY);
  }

  private static void requireText(String value, String what) {
    Objects.requireNonNull(value, what);
    if (value.isBlank()) {
      throw new IllegalArgumentException(what + " must not be blank");
    }
  }
}
