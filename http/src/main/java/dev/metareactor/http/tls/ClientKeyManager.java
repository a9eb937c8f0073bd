package dev.metareactor.http.tls;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.jspecify.annotations.Nullable;

/**
 * The one client certificate of a connection, handed to TLS as it is.
 *
 * <p>Why not {@code SslContextBuilder.keyManager(key, chain)}: that stores the key in a PKCS#12 key store and reads it
 * back, encrypting and decrypting it with 10,000 rounds of PBKDF2 each way — at every engine start (the kubeconfig's
 * client certificate) and every hook context, while the code is still interpreted; it showed in the engine's start-up
 * profile.
 */
final class ClientKeyManager extends X509ExtendedKeyManager {

  private static final String ALIAS = "client";

  private final PrivateKey key;
  private final X509Certificate[] chain;

  /**
   * @throws IllegalArgumentException when the key does not belong to the chain's first certificate (found by signing
   *     with the key and verifying with the certificate, so that a wrong pair fails here, naming the material, rather
   *     than in every handshake)
   */
  ClientKeyManager(PrivateKey key, List<X509Certificate> chain) {
    if (chain.isEmpty()) {
      throw new IllegalArgumentException("clientTLS certificate: no certificate");
    }
    this.key = key;
    this.chain = chain.toArray(X509Certificate[]::new);
    requireMatch(key, this.chain[0]);
  }

  private static void requireMatch(PrivateKey key, X509Certificate certificate) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "Ed448", "EdDSA" -> "EdDSA";
      default -> null; // other key types are left to the handshake
    };
    if (algorithm == null) {
      return;
    }
    byte[] probe = {'m', 'e', 't', 'a', 'r', 'e', 'a', 'c', 't', 'o', 'r'};
    boolean matches;
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      matches = verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      matches = false;
    }
    if (!matches) {
      throw new IllegalArgumentException("clientTLS key: does not belong to the certificate "
          + certificate.getSubjectX500Principal().getName());
    }
  }

  @Override
  public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
    return ALIAS;
  }

  @Override
  public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
    return ALIAS;
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return new String[] {ALIAS};
  }

  @Override
  public X509Certificate @Nullable [] getCertificateChain(String alias) {
    return ALIAS.equals(alias) ? chain.clone() : null;
  }

  @Override
  public @Nullable PrivateKey getPrivateKey(String alias) {
    return ALIAS.equals(alias) ? key : null;
  }

  /** A client key manager serves no server side. */
  @Override
  public String @Nullable [] getServerAliases(String keyType, Principal[] issuers) {
    return null;
  }

  @Override
  public @Nullable String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return null;
  }
}
