package dev.metareactor.http;

import java.util.Objects;
import tools.jackson.databind.JsonNode;

/**
 * A hook's answer.
 *
 * @param body the parsed JSON body. When {@code cached}, it is the instance stored in the ETag cache and shared with
 *     later calls: treat it as read-only
 * @param cached true when the hook answered 304 or 412 and the body came from the ETag cache
 * @param attempts how many HTTP requests the call took (more than 1 after retries)
 */
public record HookResponse(JsonNode body, boolean cached, int attempts) {

  public HookResponse {
    Objects.requireNonNull(body, "body");
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1: " + attempts);
    }
  }
}
