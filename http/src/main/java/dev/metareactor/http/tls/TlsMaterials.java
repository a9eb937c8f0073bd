package dev.metareactor.http.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.KeyManagerFactoryWrapper;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * TLS materials of one hook, resolved by the engine from Secrets and ConfigMaps ({@code webhook.caBundle},
 * {@code webhook.clientTLS}) and applied here. Nothing set means the JDK's default trust store and no client
 * certificate. TLS 1.2 is the minimum in every case, as upstream's transport.
 *
 * @param caBundlePem PEM certificates that sign the hook's serving certificate; they replace the system roots
 * @param clientCertificatePem the client certificate chain (PEM) for mutual TLS
 * @param clientKeyPem the client certificate's private key (PEM: PKCS#8, PKCS#1 RSA or SEC1 EC)
 */
public record TlsMaterials(@Nullable String caBundlePem, @Nullable String clientCertificatePem,
    @Nullable String clientKeyPem) {

  /** System roots, no client certificate. */
  public static final TlsMaterials NONE = new TlsMaterials(null, null, null);

  /** Only TLS 1.3 and 1.2: Metacontroller's transport sets {@code MinVersion: tls.VersionTLS12}. */
  static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  public TlsMaterials {
    if ((clientCertificatePem == null) != (clientKeyPem == null)) {
      throw new IllegalArgumentException("clientTLS needs both a certificate and a private key");
    }
  }

  /** A custom CA bundle only. */
  public static TlsMaterials caBundle(String caBundlePem) {
    return new TlsMaterials(caBundlePem, null, null);
  }

  /** Whether anything differs from the defaults. */
  public boolean isEmpty() {
    return caBundlePem == null && clientCertificatePem == null;
  }

  /**
   * Builds the client-side Netty context. It is expensive (parses PEM, builds trust and key managers): build it once
   * per hook, not per call.
   *
   * @throws IllegalArgumentException naming the bad material when a PEM block cannot be read or the key does not
   *     fit the certificate
   */
  public SslContext clientContext() {
    SslContextBuilder builder = SslContextBuilder.forClient().protocols(PROTOCOLS);
    if (caBundlePem != null) {
      builder.trustManager(Pem.certificates(caBundlePem, "caBundle").toArray(X509Certificate[]::new));
    }
    if (clientCertificatePem != null && clientKeyPem != null) {
      List<X509Certificate> chain = Pem.certificates(clientCertificatePem, "clientTLS certificate");
      PrivateKey key = Pem.privateKey(clientKeyPem, "clientTLS key");
      builder.keyManager(new KeyManagerFactoryWrapper(new ClientKeyManager(key, chain)));
    }
    try {
      return builder.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("TLS materials rejected: " + e.getMessage(), e);
    }
  }

  /** Never prints key material. */
  @Override
  public String toString() {
    return "TlsMaterials[caBundle=" + (caBundlePem != null) + ", clientCertificate=" + (clientCertificatePem != null)
        + "]";
  }
}
