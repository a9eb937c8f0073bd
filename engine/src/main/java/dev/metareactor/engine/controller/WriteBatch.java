package dev.metareactor.engine.controller;

import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runs a sync's writes side by side and lets every one of them run even when some fail (a failed delete must not
 * keep a create from happening); fails at the end with one {@link WritesFailedException} listing every failure,
 * so the sync is retried and the Event names all problems at once.
 */
public final class WriteBatch {

  /** Writes of one sync in flight at once: enough to hide API latency, few enough to leave room for others. */
  private static final int IN_PARALLEL = 8;

  private WriteBatch() {}

  /**
   * @param what what the writes are for, the start of the failure's message ({@code can't reconcile children})
   */
  public static Mono<Void> run(String what, List<Mono<Void>> writes) {
    if (writes.isEmpty()) {
      return Mono.empty();
    }
    return Flux.fromIterable(writes)
        .flatMap(write -> write.then(Mono.<Throwable>empty()).onErrorResume(Mono::just), IN_PARALLEL)
        .collectList()
        .flatMap(failures -> failures.isEmpty() ? Mono.empty()
            : Mono.error(new WritesFailedException(what, failures)));
  }

  /** Some writes of a batch failed; the message lists each, and each failure is suppressed in it. */
  public static final class WritesFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WritesFailedException(String what, List<Throwable> failures) {
      super(what + ": " + String.join("; ", failures.stream().map(Throwable::getMessage).toList()));
      failures.forEach(this::addSuppressed);
    }
  }
}
