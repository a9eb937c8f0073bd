package dev.metareactor.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Where a hook is called: an absolute {@code http} or {@code https} URL.
 *
 * <p>A URL may carry secrets: user info ({@code user:password@}, sent as basic auth as upstream's Go client does)
 * and a query ({@code ?token=...}). Everything that shows the endpoint to people or machines — log lines, Events,
 * error messages, the {@code url} label of hook metrics, circuit breaker names — shows it {@link #redacted()}:
 * scheme, host, port and path only. {@link #toString()} is the redacted form, so a URL printed by accident leaks
 * nothing; only {@link #uri()} has the whole URL, for the request itself.
 *
 * <p>Metacontroller's rule ({@code webhookURL} upstream): a full {@code url} wins; otherwise both {@code service} and
 * {@code path} are required and resolve to {@code <protocol>://<name>.<namespace>:<port><path>} with port 80 and
 * protocol {@code http} by default. The error messages for incomplete configurations are upstream's.
 *
 * @param uri the absolute URL, user info and query included: for the request only, never to be shown
 */
public record HookEndpoint(URI uri) {

  static final String URL_OR_SERVICE_AND_PATH = "must specify either a full 'url', or both 'service' and 'path'";
  static final String SERVICE_NAME_AND_NAMESPACE = "'service' must specify both 'name' and 'namespace'";

  public HookEndpoint {
    Objects.requireNonNull(uri, "uri");
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new InvalidWebhookException("url '" + redact(uri.toString()) + "' must start with http:// or https://");
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      throw new InvalidWebhookException("url '" + redact(uri.toString()) + "' has no host");
    }
  }

  /**
   * A Kubernetes Service through which a hook is reached ({@code webhook.service}).
   *
   * @param name the Service's {@code metadata.name}
   * @param namespace the Service's {@code metadata.namespace}
   * @param port the port, 80 when null
   * @param protocol {@code http} (when null) or {@code https}
   */
  public record Service(@Nullable String name, @Nullable String namespace, @Nullable Integer port,
      @Nullable String protocol) {}

  /** Parses an absolute URL. */
  public static HookEndpoint of(String url) {
    Objects.requireNonNull(url, "url");
    try {
      return new HookEndpoint(new URI(url));
    } catch (URISyntaxException e) {
      // Not the exception itself as the cause: its message repeats the whole URL.
      throw new InvalidWebhookException("url '" + redact(url) + "' is not a valid URL: " + e.getReason());
    }
  }

  /**
   * Resolves the endpoint from a webhook's {@code url}, {@code service} and {@code path} the way Metacontroller does.
   *
   * @throws InvalidWebhookException with upstream's message when neither a URL nor a complete service + path is
   *     given, or when the result is not a valid URL
   */
  public static HookEndpoint resolve(@Nullable String url, @Nullable Service service, @Nullable String path) {
    if (url != null) {
      return of(url);
    }
    if (service == null || path == null) {
      throw new InvalidWebhookException(URL_OR_SERVICE_AND_PATH);
    }
    if (service.name() == null || service.name().isEmpty()
        || service.namespace() == null || service.namespace().isEmpty()) {
      throw new InvalidWebhookException(SERVICE_NAME_AND_NAMESPACE);
    }
    if (!path.startsWith("/")) {
      throw new InvalidWebhookException("'path' must start with '/': " + path);
    }
    int port = service.port() == null ? 80 : service.port();
    String protocol = service.protocol() == null ? "http" : service.protocol();
    return of(protocol + "://" + service.name() + "." + service.namespace() + ":" + port + path);
  }

  /** Whether calls use TLS. */
  public boolean secure() {
    return uri.getScheme().equalsIgnoreCase("https");
  }

  /**
   * The basic auth credentials of the URL's user info ({@code user:password@host}), as Go's HTTP client, and so
   * upstream, sends them: percent-decoded, the password empty when there is none.
   */
  public Optional<HookAuth> userInfoAuth() {
    String userInfo = uri.getUserInfo();
    if (userInfo == null) {
      return Optional.empty();
    }
    int colon = userInfo.indexOf(':');
    return Optional.of(colon < 0 ? HookAuth.basic(userInfo, "")
        : HookAuth.basic(userInfo.substring(0, colon), userInfo.substring(colon + 1)));
  }

  /** The URL without user info, query and fragment: what may be shown (see the class documentation). */
  public String redacted() {
    StringBuilder shown = new StringBuilder(uri.getScheme()).append("://").append(uri.getHost());
    if (uri.getPort() >= 0) {
      shown.append(':').append(uri.getPort());
    }
    return shown.append(uri.getRawPath() == null ? "" : uri.getRawPath()).toString();
  }

  /**
   * A URL as written, maybe not even valid, without its user info, query and fragment: for messages about URLs
   * that could not be parsed.
   */
  public static String redact(String url) {
    int end = url.length();
    for (char stop : new char[] {'?', '#'}) {
      int at = url.indexOf(stop);
      if (at >= 0 && at < end) {
        end = at;
      }
    }
    String kept = url.substring(0, end);
    int scheme = kept.indexOf("://");
    int authorityStart = scheme < 0 ? 0 : scheme + 3;
    int slash = kept.indexOf('/', authorityStart);
    int authorityEnd = slash < 0 ? kept.length() : slash;
    int at = kept.lastIndexOf('@', authorityEnd - 1);
    return at < authorityStart ? kept : kept.substring(0, authorityStart) + kept.substring(at + 1);
  }

  /** The {@linkplain #redacted() redacted} URL. */
  @Override
  public String toString() {
    return redacted();
  }
}
