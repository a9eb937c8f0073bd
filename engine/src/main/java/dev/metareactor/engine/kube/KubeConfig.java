package dev.metareactor.engine.kube;

import dev.metareactor.http.tls.TlsMaterials;
import io.fabric8.kubernetes.client.Config;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the API server is and how the engine authenticates to it. Resolved by fabric8's {@link Config} — a
 * kubeconfig (contexts, exec credential plugins, tokens, client certificates) or, without one, the pod's service
 * account — so the engine understands every kubeconfig client-go does; the connection itself is the engine's own
 * ({@link KubeApi}).
 *
 * <p>Credentials that expire (an exec plugin's token, a rotated service-account token) are re-resolved by
 * {@link #refreshCredentials()}, which {@link KubeApi} calls when the API server answers 401.
 */
public final class KubeConfig {

  private static final Logger LOG = LoggerFactory.getLogger(KubeConfig.class);
  private static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);

  private final URI server;
  private final SslContext ssl;
  private final Duration requestTimeout;
  private volatile Config config;

  private KubeConfig(Config config) {
    this.config = config;
    String master = Objects.requireNonNull(config.getMasterUrl(), "the configuration names no API server");
    this.server = URI.create(master.endsWith("/") ? master.substring(0, master.length() - 1) : master);
    this.ssl = "https".equalsIgnoreCase(server.getScheme()) ? sslContext(config) : null;
    Integer timeout = config.getRequestTimeout();
    this.requestTimeout = timeout != null && timeout > 0 ? Duration.ofMillis(Math.max(timeout, 30_000))
        : DEFAULT_REQUEST_TIMEOUT;
    if (notBlank(config.getHttpsProxy()) || notBlank(config.getHttpProxy())) {
      LOG.warn("an HTTP proxy is configured for the API server ({}); the engine connects directly",
          notBlank(config.getHttpsProxy()) ? config.getHttpsProxy() : config.getHttpProxy());
    }
  }

  /**
   * The configuration of {@code --kubeconfig}: that file, or, when blank, the pod's service account (falling back
   * to {@code KUBECONFIG} and {@code ~/.kube/config} outside a cluster).
   *
   * @throws IllegalArgumentException when the configuration cannot be used (no server, unreadable credentials)
   */
  public static KubeConfig load(String kubeconfig) {
    Config config = kubeconfig == null || kubeconfig.isBlank()
        ? Config.autoConfigure(null)
        : Config.fromKubeconfig(new File(kubeconfig));
    return of(config);
  }

  /** The connection a fabric8 configuration describes. */
  public static KubeConfig of(Config config) {
    return new KubeConfig(Objects.requireNonNull(config, "config"));
  }

  public URI server() {
    return server;
  }

  /** The TLS context, or {@code null} for a plain-HTTP server. */
  public SslContext ssl() {
    return ssl;
  }

  /** How long one request may take, answer included. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /** The {@code Authorization} header value, or {@code null} when client certificates alone authenticate. */
  public String authorization() {
    Config current = config;
    if (current.getOauthTokenProvider() != null) {
      return "Bearer " + current.getOauthTokenProvider().getToken();
    }
    if (notBlank(current.getOauthToken())) {
      return "Bearer " + current.getOauthToken();
    }
    if (notBlank(current.getAutoOAuthToken())) {
      return "Bearer " + current.getAutoOAuthToken();
    }
    if (notBlank(current.getUsername()) && current.getPassword() != null) {
      String pair = current.getUsername() + ":" + current.getPassword();
      return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }
    return null;
  }

  /**
   * Resolves the credentials again (re-reads the kubeconfig or the service-account token, re-runs an exec
   * plugin). Blocking: call it off the event loops.
   */
  public void refreshCredentials() {
    try {
      config = config.refresh();
    } catch (RuntimeException e) {
      LOG.warn("could not refresh the API server credentials: {}", e.getMessage());
    }
  }

  private static SslContext sslContext(Config config) {
    if (Boolean.TRUE.equals(config.getTrustCerts())) {
      try {
        return SslContextBuilder.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE).build();
      } catch (SSLException e) {
        throw new IllegalArgumentException("TLS configuration rejected: " + e.getMessage(), e);
      }
    }
    String ca = pem(config.getCaCertData(), config.getCaCertFile(), "certificate-authority");
    String cert = pem(config.getClientCertData(), config.getClientCertFile(), "client-certificate");
    String key = pem(config.getClientKeyData(), config.getClientKeyFile(), "client-key");
    return new TlsMaterials(ca, cert == null || key == null ? null : cert, cert == null || key == null ? null : key)
        .clientContext();
  }

  /** PEM text from base64 data or a file; {@code null} when neither is set. */
  private static String pem(String base64, String file, String what) {
    if (notBlank(base64)) {
      return new String(Base64.getMimeDecoder().decode(base64.trim()), StandardCharsets.UTF_8);
    }
    if (notBlank(file)) {
      try {
        return Files.readString(Path.of(file), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new IllegalArgumentException("cannot read " + what + " " + file + ": " + e.getMessage(), e);
      }
    }
    return null;
  }

  private static boolean notBlank(String value) {
    return value != null && !value.isBlank();
  }
}
