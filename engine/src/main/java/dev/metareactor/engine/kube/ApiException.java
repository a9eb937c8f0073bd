package dev.metareactor.engine.kube;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The API server answered a request with an error status: the HTTP code, the {@code Status} object's reason and
 * message (for example 409 {@code Conflict}, 404 {@code NotFound}, 422 {@code Invalid}).
 */
public final class ApiException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int code;
  private final String reason;
  private final transient @Nullable Duration retryAfter;

  public ApiException(int code, String reason, String message, @Nullable Duration retryAfter) {
    super(message);
    this.code = code;
    this.reason = reason == null ? "" : reason;
    this.retryAfter = retryAfter;
  }

  /** An error answer: its {@code Status} body when there is one, else the start of the body. */
  static ApiException of(String method, String path, int code, byte[] body, @Nullable String retryAfterHeader) {
    String reason = "";
    String message;
    try {
      JsonNode status = KubeJson.mapper().readTree(body);
      reason = status.path("reason").asString("");
      // A Status says it in message; what the API server proxies (a pod's or a service's answer) may say it in error.
      message = status.path("message").asString(status.path("error").asString(""));
    } catch (RuntimeException e) {
      message = new String(body, 0, Math.min(body.length, 512), StandardCharsets.UTF_8);
    }
    if (message.isBlank()) {
      message = "HTTP " + code;
    }
    return new ApiException(code, reason, method + " " + path + ": " + code + " " + message,
        retryAfter(retryAfterHeader));
  }

  private static @Nullable Duration retryAfter(@Nullable String header) {
    if (header == null) {
      return null;
    }
    try {
      return Duration.ofSeconds(Long.parseLong(header.trim()));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** The HTTP status code. */
  public int code() {
    return code;
  }

  /** The {@code Status} reason ({@code AlreadyExists}, {@code Conflict}, ...), or {@code ""}. */
  public String reason() {
    return reason;
  }

  /** The server's {@code Retry-After} (429, some 5xx), or {@code null}. */
  public @Nullable Duration retryAfter() {
    return retryAfter;
  }

  /**
   * How long the server asked to wait before sending the request again, when {@code error} is an answer that may be
   * retried (429 or 5xx) with a {@code Retry-After}; {@code null} for any other error.
   */
  public static @Nullable Duration retryAfterOf(Throwable error) {
    if (!(error instanceof ApiException refused) || refused.code != 429 && refused.code < 500
        || refused.retryAfter == null) {
      return null;
    }
    return refused.retryAfter.isNegative() ? Duration.ZERO : refused.retryAfter;
  }

  /** The code of {@code error} when it is an {@link ApiException}, else -1. */
  public static int codeOf(Throwable error) {
    return error instanceof ApiException api ? api.code : -1;
  }
}
