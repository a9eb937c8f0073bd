package dev.metareactor.engine.api;

import java.util.Objects;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.MissingNode;

/**
 * One hook of a controller: the request/response {@code version} and either the {@code webhook} block as written (the
 * hook client validates and resolves it: url or service + path, timeout, etag, TLS and auth) or the {@code cel}
 * block as written (Metareactor's own: an expression the engine evaluates itself, compiled by the hook package).
 *
 * @param webhook the {@code webhook} block; a missing node for a CEL hook
 * @param cel the {@code cel} block; a missing node for a webhook
 */
public record HookSpec(HookVersion version, JsonNode webhook, JsonNode cel) {

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
    Objects.requireNonNull(cel, "cel");
    if (webhook.isMissingNode() == cel.isMissingNode()) {
      throw new IllegalArgumentException("a hook is either a webhook or a CEL expression");
    }
  }

  /** A webhook. */
  public HookSpec(HookVersion version, JsonNode webhook) {
    this(version, webhook, MissingNode.getInstance());
  }

  /** A CEL hook: its {@code cel} block. */
  public static HookSpec cel(HookVersion version, JsonNode cel) {
    return new HookSpec(version, MissingNode.getInstance(), cel);
  }

  /** Whether the engine evaluates this hook itself ({@code cel}) rather than calling a webhook. */
  public boolean isCel() {
    return !cel.isMissingNode();
  }
}
