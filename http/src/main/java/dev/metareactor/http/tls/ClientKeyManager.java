package dev.metareactor.http.tls;

import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAKey;
import java.security.interfaces.RSAPublicKey;
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
   * @throws IllegalArgumentException when the key does not belong to the chain's first certificate, so that a wrong
   *     pair fails here, naming the material, rather than in every handshake
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
    if (!belongsTo(key, certificate.getPublicKey())) {
      throw new IllegalArgumentException("clientTLS key: does not belong to the certificate "
          + certificate.getSubjectX500Principal().getName());
    }
  }

  /**
   * An RSA pair is one modulus: comparing the two is exact and free. Other keys sign a probe that the certificate's
   * key must verify. Not an RSA signature as well: the engine checks its kubeconfig's key at every start, while the
   * code is still interpreted, where one 2,048-bit private-key operation cost about a tenth of the main thread's
   * start-up.
   */
  private static boolean belongsTo(PrivateKey key, PublicKey certified) {
    if (key instanceof RSAKey rsa) {
      return certified instanceof RSAPublicKey publicKey && rsa.getModulus().equals(publicKey.getModulus());
    }
    String algorithm = switch (key.getAlgorithm()) {
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "Ed448", "EdDSA" -> "EdDSA";
      default -> null; // other key types are left to the handshake
    };
    if (algorithm == null) {
      return true;
    }
    byte[] probe = {'m', 'e', 't', 'a', 'r', 'e', 'a', 'c', 't', 'o', 'r'};
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certified);
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
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
