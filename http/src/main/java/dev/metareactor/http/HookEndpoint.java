package dev.metareactor.http;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Where a hook is called: an absolute {@code http} or {@code https} URL.
 *
 * <p>Metacontroller's rule ({@code webhookURL} upstream): a full {@code url} wins; otherwise both {@code service} and
 * {@code path} are required and resolve to {@code <protocol>://<name>.<namespace>:<port><path>} with port 80 and
 * protocol {@code http} by default. The error messages for incomplete configurations are upstream's.
 *
 * @param uri the absolute URL; its string form names the hook in metrics and circuit breakers
 */
public record HookEndpoint(URI uri) {

  static final String URL_OR_SERVICE_AND_PATH = "must specify either a full 'url', or both 'service' and 'path'";
  static final String SERVICE_NAME_AND_NAMESPACE = "'service' must specify both 'name' and 'namespace'";

  public HookEndpoint {
    Objects.requireNonNull(uri, "uri");
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new InvalidWebhookException("url '" + uri + "' must start with http:// or https://");
    }
    if (uri.getHost() == null || uri.getHost().isEmpty()) {
      throw new InvalidWebhookException("url '" + uri + "' has no host");
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
      throw new InvalidWebhookException("url '" + url + "' is not a valid URL: " + e.getReason(), e);
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

  @Override
  public String toString() {
    return uri.toString();
  }
}
