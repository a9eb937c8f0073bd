package dev.metareactor.http;

import dev.metareactor.http.tls.TlsMaterials;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * One hook's webhook block, validated: where to call, how long a call may take, ETag caching, and the TLS and auth
 * materials the engine resolved from Secrets.
 *
 * <p>{@link #fromJson} reads the fields that need no Kubernetes access ({@code url}, {@code service}, {@code path},
 * {@code timeout}, {@code etag}); the engine adds {@link #withTls TLS} and {@link #withAuth auth} after reading the
 * referenced Secrets and ConfigMaps.
 *
 * @param endpoint where the hook is called
 * @param timeout the deadline of a whole call, retries included; {@link #DEFAULT_TIMEOUT} when null, zero or
 *     negative (logged, as upstream)
 * @param etag ETag caching
 * @param tls TLS materials, used for {@code https} endpoints only
 * @param auth the {@code Authorization} header from the webhook's {@code authorization} or {@code basicAuth}, if any
 *     (see {@link #effectiveAuth()} for what is sent)
 */
public record WebhookSpec(HookEndpoint endpoint, Duration timeout, EtagSettings etag, TlsMaterials tls,
    Optional<HookAuth> auth) {

  /** Metacontroller's default hook timeout. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  private static final Logger LOG = LoggerFactory.getLogger(WebhookSpec.class);

  public WebhookSpec(HookEndpoint endpoint, @Nullable Duration timeout, EtagSettings etag, TlsMaterials tls,
      Optional<HookAuth> auth) {
    this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
    this.timeout = effectiveTimeout(timeout, endpoint);
    this.etag = Objects.requireNonNull(etag, "etag");
    this.tls = Objects.requireNonNull(tls, "tls");
    this.auth = Objects.requireNonNull(auth, "auth");
  }

  /** A plain hook: default timeout, no ETags, no TLS materials, no auth. */
  public static WebhookSpec of(HookEndpoint endpoint) {
    return new WebhookSpec(endpoint, DEFAULT_TIMEOUT, EtagSettings.DISABLED, TlsMaterials.NONE, Optional.empty());
  }

  /** A plain hook at this URL. */
  public static WebhookSpec of(String url) {
    return of(HookEndpoint.of(url));
  }

  public WebhookSpec withTimeout(@Nullable Duration newTimeout) {
    return new WebhookSpec(endpoint, newTimeout, etag, tls, auth);
  }

  public WebhookSpec withEtag(EtagSettings newEtag) {
    return new WebhookSpec(endpoint, timeout, newEtag, tls, auth);
  }

  public WebhookSpec withTls(TlsMaterials newTls) {
    return new WebhookSpec(endpoint, timeout, etag, newTls, auth);
  }

  public WebhookSpec withAuth(@Nullable HookAuth newAuth) {
    return new WebhookSpec(endpoint, timeout, etag, tls, Optional.ofNullable(newAuth));
  }

  /**
   * The {@code Authorization} header calls carry: the configured credentials, else the basic auth of the URL's user
   * info ({@code user:password@host}, which Go's HTTP client, and so upstream, sends).
   */
  public Optional<HookAuth> effectiveAuth() {
    return auth.isPresent() ? auth : endpoint.userInfoAuth();
  }

  /** Whether calls send credentials over plain {@code http}, where anyone on the way can read them. */
  public boolean sendsCredentialsInTheClear() {
    return !endpoint.secure() && effectiveAuth().isPresent();
  }

  /**
   * Reads a {@code webhook} block as written in a controller object.
   *
   * @throws InvalidWebhookException naming the field when the block cannot be called (upstream's messages for a
   *     missing URL or an incomplete service) or a field has the wrong type
   */
  public static WebhookSpec fromJson(JsonNode webhook) {
    Objects.requireNonNull(webhook, "webhook");
    if (!webhook.isObject()) {
      throw new InvalidWebhookException("'webhook' must be an object");
    }
    HookEndpoint.Service service = null;
    JsonNode serviceNode = present(webhook.get("service"));
    if (serviceNode != null) {
      if (!serviceNode.isObject()) {
        throw new InvalidWebhookException("'service' must be an object");
      }
      service = new HookEndpoint.Service(string(serviceNode, "name", "service.name"),
          string(serviceNode, "namespace", "service.namespace"), integer(serviceNode, "port", "service.port"),
          string(serviceNode, "protocol", "service.protocol"));
    }
    HookEndpoint endpoint = HookEndpoint.resolve(string(webhook, "url", "url"), service,
        string(webhook, "path", "path"));

    String timeoutText = string(webhook, "timeout", "timeout");
    Duration timeout = null;
    if (timeoutText != null) {
      try {
        timeout = GoDuration.parse(timeoutText);
      } catch (IllegalArgumentException e) {
        throw new InvalidWebhookException("'timeout': " + e.getMessage(), e);
      }
    }

    EtagSettings etag = EtagSettings.DISABLED;
    JsonNode etagNode = present(webhook.get("etag"));
    if (etagNode != null) {
      if (!etagNode.isObject()) {
        throw new InvalidWebhookException("'etag' must be an object");
      }
      JsonNode enabled = present(etagNode.get("enabled"));
      if (enabled != null && !enabled.isBoolean()) {
        throw new InvalidWebhookException("'etag.enabled' must be a boolean");
      }
      etag = new EtagSettings(enabled != null && enabled.booleanValue(),
          integer(etagNode, "cacheTimeoutSeconds", "etag.cacheTimeoutSeconds"),
          integer(etagNode, "cacheCleanupSeconds", "etag.cacheCleanupSeconds"));
    }
    return new WebhookSpec(endpoint, timeout, etag, TlsMaterials.NONE, Optional.empty());
  }

  private static Duration effectiveTimeout(@Nullable Duration timeout, HookEndpoint endpoint) {
    if (timeout == null) {
      return DEFAULT_TIMEOUT;
    }
    if (timeout.isZero() || timeout.isNegative()) {
      LOG.info("invalid client config: timeout must be a non-zero positive duration. Defaulting to 10 seconds"
          + " (hook {}, timeout {})", endpoint, GoDuration.format(timeout));
      return DEFAULT_TIMEOUT;
    }
    return timeout;
  }

  private static @Nullable JsonNode present(@Nullable JsonNode node) {
    return node == null || node.isNull() || node.isMissingNode() ? null : node;
  }

  private static @Nullable String string(JsonNode parent, String name, String field) {
    JsonNode node = typed(parent, name, field, JsonNode::isString, "a string");
    return node == null ? null : node.stringValue();
  }

  private static @Nullable Integer integer(JsonNode parent, String name, String field) {
    JsonNode node = typed(parent, name, field, JsonNode::isInt, "a 32-bit integer");
    return node == null ? null : node.intValue();
  }

  private static @Nullable JsonNode typed(JsonNode parent, String name, String field, Predicate<JsonNode> isType,
      String type) {
    JsonNode node = present(parent.get(name));
    if (node != null && !isType.test(node)) {
      throw new InvalidWebhookException("'" + field + "' must be " + type);
    }
    return node;
  }
}
