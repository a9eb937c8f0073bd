package dev.metareactor.engine.api;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * One hook of a controller: the request/response {@code version} and the {@code webhook} block as written (the
 * hook client validates and resolves it: url or service + path, timeout, etag, TLS and auth).
 */
public record HookSpec(HookVersion version, JsonNode webhook) {

  /** {@code hooks.<name>.version}. */
  public enum HookVersion {
    V1,
    V2;

    /**
     * Parses {@code v1} (also the default when absent) or {@code v2}.
     *
     * @throws InvalidControllerException otherwise
     */
    public static HookVersion parse(@Nullable String value, String field) {
      if (value == null || value.isEmpty() || value.equals("v1")) {
        return V1;
      }
      if (value.equals("v2")) {
        return V2;
      }
      throw new InvalidControllerException(field + ": unknown hook version \"" + value + "\" (expected v1 or v2)");
    }
  }

  public HookSpec {
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(webhook, "webhook");
  }
}
