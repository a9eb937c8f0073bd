package dev.metareactor.engine.hook;

import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Calls one hook of a hosted controller. Implementations own transport, timeouts, retries, ETag caching and
 * metrics; a hook that asks to be called later (HTTP 429) fails with {@link RetryAfterException}.
 */
@FunctionalInterface
public interface HookCaller {

  /**
   * Sends {@code request} and returns the parsed response body.
   *
   * @param root the object the call is about ({@code kind}, {@code namespace}, {@code name}), the ETag cache key
   */
  Mono<JsonNode> call(JsonNode request, RootObject root);

  /** The object a hook call is about. */
  record RootObject(String kind, String namespace, String name) {}
}
