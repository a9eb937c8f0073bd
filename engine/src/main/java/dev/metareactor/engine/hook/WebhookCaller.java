package dev.metareactor.engine.hook;

import dev.metareactor.engine.controller.HookCaller;
import dev.metareactor.engine.controller.RetryAfterException;
import dev.metareactor.http.CacheKey;
import dev.metareactor.http.Hook;
import dev.metareactor.http.HookResponse;
import dev.metareactor.http.HookRetryAfterException;
import java.util.Objects;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;

/**
 * A {@link HookCaller} over a webhook of the hook client: the answer's body, a 429 turned into
 * {@link RetryAfterException}, and the rest of the sync moved off the Netty event loop that delivered the answer
 * (merging children and building writes is CPU work that must not delay other hooks' I/O).
 */
public final class WebhookCaller implements HookCaller {

  private final Hook hook;
  private final Scheduler continueOn;

  /**
   * @param continueOn where the caller's pipeline continues after the answer arrives
   */
  public WebhookCaller(Hook hook, Scheduler continueOn) {
    this.hook = Objects.requireNonNull(hook, "hook");
    this.continueOn = Objects.requireNonNull(continueOn, "continueOn");
  }

  @Override
  public Mono<JsonNode> call(JsonNode request, RootObject root) {
    return hook.call(request, new CacheKey(root.kind(), root.namespace(), root.name()))
        .publishOn(continueOn)
        .map(HookResponse::body)
        .onErrorMap(HookRetryAfterException.class,
            e -> new RetryAfterException(e.retryAfter(), e.getMessage()));
  }

  /** Drops what the hook's ETag cache holds for the object (it was deleted). */
  public void forget(RootObject root) {
    hook.forget(new CacheKey(root.kind(), root.namespace(), root.name()));
  }

  @Override
  public String toString() {
    return hook.toString();
  }
}
