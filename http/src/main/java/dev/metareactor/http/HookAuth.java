package dev.metareactor.http;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The {@code Authorization} header a hook call carries, built from credentials the engine read from a Secret
 * ({@code webhook.authorization} or {@code webhook.basicAuth}). A webhook has at most one of the two, so a hook has
 * at most one {@code HookAuth}.
 *
 * @param headerValue the whole header value, for example {@code Bearer abc}
 */
public record HookAuth(String headerValue) {

  public HookAuth {
    Objects.requireNonNull(headerValue, "headerValue");
    if (headerValue.isBlank() || headerValue.indexOf('\n') >= 0 || headerValue.indexOf('\r') >= 0) {
      throw new InvalidWebhookException("the Authorization header must be one non-empty line");
    }
  }

  /**
   * {@code Authorization: <type> <credentials>}, as upstream's {@code authorization} block: the type defaults to
   * {@code Bearer} and the credentials are trimmed (Secret values often end with a newline).
   *
   * @param type the scheme, {@code Bearer} when null or empty; {@code Basic} is refused (use {@link #basic})
   * @throws InvalidWebhookException when the credentials are empty or the type is {@code Basic}
   */
  public static HookAuth authorization(@Nullable String type, String credentials) {
    Objects.requireNonNull(credentials, "credentials");
    String scheme = type == null || type.isBlank() ? "Bearer" : type.strip();
    if (scheme.toLowerCase(Locale.ROOT).equals("basic")) {
      throw new InvalidWebhookException("authorization type 'Basic' is not allowed, use basicAuth instead");
    }
    String value = credentials.strip();
    if (value.isEmpty()) {
      throw new InvalidWebhookException("authorization credentials are empty");
    }
    return new HookAuth(scheme + " " + value);
  }

  /**
   * HTTP basic auth ({@code basicAuth}): {@code Authorization: Basic base64(username:password)}.
   *
   * @throws InvalidWebhookException when the username contains {@code :} (RFC 7617)
   */
  public static HookAuth basic(String username, String password) {
    Objects.requireNonNull(username, "username");
    Objects.requireNonNull(password, "password");
    if (username.indexOf(':') >= 0) {
      throw new InvalidWebhookException("basicAuth username must not contain ':'");
    }
    String pair = username + ":" + password;
    return new HookAuth("Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
  }

  /** The scheme ({@code Bearer}, {@code Basic}, ...): what may be said about the credentials. */
  public String scheme() {
    int space = headerValue.indexOf(' ');
    return space > 0 ? headerValue.substring(0, space) : "";
  }

  /** Never prints the credentials. */
  @Override
  public String toString() {
    return "HookAuth[" + scheme() + " <redacted>]";
  }
}
