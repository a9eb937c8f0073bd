package dev.metareactor.engine.hook;

import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.http.HookAuth;
import dev.metareactor.http.HookEndpoint;
import dev.metareactor.http.InvalidWebhookException;
import dev.metareactor.http.WebhookSpec;
import dev.metareactor.http.tls.TlsMaterials;
import java.net.URI;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * Where a webhook's TLS material and credentials come from, as upstream resolves them: the webhook's own
 * {@code caBundle}, {@code clientTLS}, {@code authorization} and {@code basicAuth} when any of them is set (then
 * only those), else the first {@code spec.endpointConfigs} entry whose {@code host} matches the hook's URL
 * (case-insensitive; {@code host} or {@code host:port}, the scheme's default port matching either way).
 *
 * <p>{@link #of} checks what can be checked without reading anything (it throws
 * {@link InvalidControllerException}); {@link #applyTo} reads the referenced Secrets and ConfigMaps through a
 * lookup the caller provides (an informer cache) and fails with {@link MaterialException} naming what is missing.
 *
 * @param caBundle where the CA certificates come from
 * @param clientTls where the client certificate and key come from
 * @param authorization the {@code Authorization: <type> <token>} credentials
 * @param basicAuth the HTTP basic credentials
 */
public record WebhookMaterials(Optional<CaBundle> caBundle, Optional<ClientTls> clientTls,
    Optional<Authorization> authorization, Optional<BasicAuth> basicAuth) {

  /** No material: the JDK's trust store, no client certificate, no {@code Authorization} header. */
  public static final WebhookMaterials NONE =
      new WebhookMaterials(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

  /** A Secret or ConfigMap the material is read from. */
  public record ObjectRef(Kind kind, String namespace, String name) {
    /** The kinds of object material comes from. */
    public enum Kind {
      SECRET,
      CONFIG_MAP
    }

    @Override
    public String toString() {
      return (kind == Kind.SECRET ? "secret " : "configmap ") + namespace + "/" + name;
    }
  }

  /** {@code caBundle}: PEM inline, or under {@code key} (default {@code ca.crt}) of a Secret or ConfigMap. */
  public record CaBundle(@Nullable String inline, @Nullable ObjectRef ref, @Nullable String key) {}

  /** {@code clientTLS}: certificate and key under {@code certKey}/{@code privateKeyKey} of a Secret. */
  public record ClientTls(ObjectRef secret, String certKey, String privateKeyKey) {}

  /** {@code authorization}: {@code <type> <value of key>}, type {@code Bearer} by default. */
  public record Authorization(@Nullable String type, ObjectRef secret, String key) {}

  /** {@code basicAuth}: username and password under {@code usernameKey}/{@code passwordKey} of a Secret. */
  public record BasicAuth(ObjectRef secret, String usernameKey, String passwordKey) {}

  /**
   * The material of one webhook.
   *
   * @param webhook the {@code webhook} block
   * @param endpointConfigs {@code spec.endpointConfigs} (a missing node when absent)
   * @param endpoint where the webhook is called, for matching {@code endpointConfigs} by host
   * @param field the webhook's path in the controller object, for messages
   * @throws InvalidControllerException naming the field when a block is malformed
   */
  public static WebhookMaterials of(JsonNode webhook, JsonNode endpointConfigs, HookEndpoint endpoint, String field) {
    if (hasAny(webhook)) {
      return parse(webhook, field);
    }
    if (endpointConfigs == null || endpointConfigs.isMissingNode() || endpointConfigs.isNull()) {
      return NONE;
    }
    if (!endpointConfigs.isArray()) {
      throw new InvalidControllerException("spec.endpointConfigs: must be a list");
    }
    for (int i = 0; i < endpointConfigs.size(); i++) {
      JsonNode config = endpointConfigs.get(i);
      if (config.isObject() && hostMatches(config.path("host").asString(""), endpoint.uri())) {
        return parse(config, "spec.endpointConfigs[" + i + "]");
      }
    }
    return NONE;
  }

  private static boolean hasAny(JsonNode block) {
    return present(block.get("caBundle")) || present(block.get("clientTLS")) || present(block.get("authorization"))
        || present(block.get("basicAuth"));
  }

  /** {@code host} against the URL's host: exact, or without the scheme's default port on either side. */
  static boolean hostMatches(String host, URI uri) {
    if (host.isEmpty() || uri.getHost() == null) {
      return false;
    }
    int defaultPort = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    int port = uri.getPort() < 0 ? defaultPort : uri.getPort();
    String bare = uri.getHost().toLowerCase(Locale.ROOT);
    String configured = host.toLowerCase(Locale.ROOT);
    return configured.equals(bare + ":" + port) || (port == defaultPort && configured.equals(bare));
  }

  private static WebhookMaterials parse(JsonNode block, String field) {
    Optional<Authorization> authorization = object(block, "authorization", field).map(node -> new Authorization(
        optionalText(node, "type", field + ".authorization"), secretRef(node, field + ".authorization"),
        text(node.path("secretRef"), "key", field + ".authorization.secretRef")));
    Optional<BasicAuth> basicAuth = object(block, "basicAuth", field).map(node -> new BasicAuth(
        secretRef(node, field + ".basicAuth"), textOr(node, "usernameKey", "username", field + ".basicAuth"),
        textOr(node, "passwordKey", "password", field + ".basicAuth")));
    if (authorization.isPresent() && basicAuth.isPresent()) {
      throw new InvalidControllerException(field + ": authorization and basicAuth are mutually exclusive");
    }
    authorization.ifPresent(auth -> {
      if (auth.type() != null && auth.type().strip().equalsIgnoreCase("basic")) {
        throw new InvalidControllerException(field + ".authorization: authorization type \"" + auth.type()
            + "\" is not supported; use the basicAuth field instead");
      }
    });
    Optional<ClientTls> clientTls = object(block, "clientTLS", field).map(node -> new ClientTls(
        secretRef(node, field + ".clientTLS"), textOr(node, "certKey", "tls.crt", field + ".clientTLS"),
        textOr(node, "privateKeyKey", "tls.key", field + ".clientTLS")));
    Optional<CaBundle> caBundle = object(block, "caBundle", field).map(node -> caBundle(node, field + ".caBundle"));
    return new WebhookMaterials(caBundle, clientTls, authorization, basicAuth);
  }

  private static CaBundle caBundle(JsonNode node, String field) {
    String inline = optionalText(node, "inline", field);
    boolean secret = present(node.get("secretRef"));
    boolean configMap = present(node.get("configMapRef"));
    if ((inline != null ? 1 : 0) + (secret ? 1 : 0) + (configMap ? 1 : 0) != 1) {
      throw new InvalidControllerException(field + ": exactly one of inline, secretRef and configMapRef is required");
    }
    if (inline != null) {
      return new CaBundle(inline, null, null);
    }
    String refField = secret ? "secretRef" : "configMapRef";
    JsonNode ref = node.get(refField);
    ObjectRef.Kind kind = secret ? ObjectRef.Kind.SECRET : ObjectRef.Kind.CONFIG_MAP;
    return new CaBundle(null, new ObjectRef(kind, text(ref, "namespace", field + "." + refField),
        text(ref, "name", field + "." + refField)), textOr(ref, "key", "ca.crt", field + "." + refField));
  }

  private static ObjectRef secretRef(JsonNode node, String field) {
    JsonNode ref = node.get("secretRef");
    if (ref == null || !ref.isObject()) {
      throw new InvalidControllerException(field + ".secretRef: required");
    }
    return new ObjectRef(ObjectRef.Kind.SECRET, text(ref, "namespace", field + ".secretRef"),
        text(ref, "name", field + ".secretRef"));
  }

  /** Every Secret and ConfigMap the material is read from. */
  public Set<ObjectRef> references() {
    Set<ObjectRef> refs = new LinkedHashSet<>();
    caBundle.map(CaBundle::ref).ifPresent(refs::add);
    clientTls.map(ClientTls::secret).ifPresent(refs::add);
    authorization.map(Authorization::secret).ifPresent(refs::add);
    basicAuth.map(BasicAuth::secret).ifPresent(refs::add);
    refs.remove(null);
    return refs;
  }

  /**
   * The webhook with its material read in.
   *
   * @param data the (decoded) data of a referenced object, empty when it does not exist
   * @throws MaterialException naming the object or key that is missing or unusable
   */
  public WebhookSpec applyTo(WebhookSpec spec, Function<ObjectRef, Optional<Map<String, String>>> data) {
    String ca = caBundle.map(bundle -> bundle.inline() != null ? bundle.inline()
        : value(data, Objects.requireNonNull(bundle.ref(), "a caBundle is inline or a reference"),
            Objects.requireNonNull(bundle.key(), "a referenced caBundle has a key"), "caBundle")).orElse(null);
    String cert = clientTls.map(tls -> value(data, tls.secret(), tls.certKey(), "clientTLS")).orElse(null);
    String key = clientTls.map(tls -> value(data, tls.secret(), tls.privateKeyKey(), "clientTLS")).orElse(null);
    HookAuth auth = null;
    try {
      if (authorization.isPresent()) {
        Authorization a = authorization.get();
        auth = HookAuth.authorization(a.type(), value(data, a.secret(), a.key(), "authorization"));
      } else if (basicAuth.isPresent()) {
        BasicAuth b = basicAuth.get();
        auth = HookAuth.basic(value(data, b.secret(), b.usernameKey(), "basicAuth").strip(),
            value(data, b.secret(), b.passwordKey(), "basicAuth").strip());
      }
    } catch (InvalidWebhookException e) {
      throw new MaterialException(e.getMessage());
    }
    WebhookSpec resolved = spec.withAuth(auth);
    return ca == null && cert == null ? resolved : resolved.withTls(new TlsMaterials(ca, cert, key));
  }

  private static String value(Function<ObjectRef, Optional<Map<String, String>>> data, ObjectRef ref, String key,
      String what) {
    Map<String, String> values = data.apply(ref)
        .orElseThrow(() -> new MaterialException("can't resolve " + what + ": " + ref + " not found"));
    String value = values.get(key);
    if (value == null) {
      throw new MaterialException("can't resolve " + what + ": " + ref + " does not contain key \"" + key + "\"");
    }
    return value;
  }

  private static boolean present(@Nullable JsonNode node) {
    return node != null && !node.isNull() && !node.isMissingNode();
  }

  private static Optional<JsonNode> object(JsonNode block, String name, String field) {
    JsonNode node = block.get(name);
    if (!present(node)) {
      return Optional.empty();
    }
    if (!node.isObject()) {
      throw new InvalidControllerException(field + "." + name + ": must be an object");
    }
    return Optional.of(node);
  }

  /** A required string: present and not empty. */
  private static String text(JsonNode node, String name, String field) {
    String text = optionalText(node, name, field);
    if (text == null) {
      throw new InvalidControllerException(field + "." + name + ": required");
    }
    return text;
  }

  /** An optional string: null when absent, null or empty. */
  private static @Nullable String optionalText(JsonNode node, String name, String field) {
    JsonNode value = node.get(name);
    if (!present(value) || (value.isString() && value.stringValue().isEmpty())) {
      return null;
    }
    if (!value.isString()) {
      throw new InvalidControllerException(field + "." + name + ": must be a string");
    }
    return value.stringValue();
  }

  private static String textOr(JsonNode node, String name, String fallback, String field) {
    return Objects.requireNonNullElse(optionalText(node, name, field), fallback);
  }

  /** A referenced Secret, ConfigMap or key is missing, or its content cannot be used. */
  public static final class MaterialException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MaterialException(@Nullable String message) {
      super(message);
    }
  }
}
