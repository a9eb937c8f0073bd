package dev.metareactor.http.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PemTest {

  private static TestCerts certs;

  @BeforeAll
  static void certificates() throws Exception {
    certs = TestCerts.shared();
  }

  @ParameterizedTest
  @ValueSource(strings = {"pkcs1", "sec1", "pkcs8"})
  void readsEveryKeyFormKubernetesSecretsCarry(String form) throws Exception {
    TestCerts.Pair pair = certs.client(form);
    PrivateKey key = Pem.privateKey(pair.keyPem(), "tls.key");
    X509Certificate certificate = Pem.certificates(pair.certificatePem(), "tls.crt").get(0);

    // The key is the certificate's: what it signs, the certificate's public key verifies.
    String algorithm = key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
    Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update("hook".getBytes(StandardCharsets.UTF_8));
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance(algorithm);
    verifier.initVerify(certificate.getPublicKey());
    verifier.update("hook".getBytes(StandardCharsets.UTF_8));
    assertThat(verifier.verify(signature)).isTrue();
    assertThat(key.getAlgorithm()).isEqualTo(form.equals("pkcs1") ? "RSA" : "EC");
  }

  @Test
  void readsEveryCertificateOfABundle() {
    String bundle = certs.caPem() + "\n" + certs.server().certificatePem();

    assertThat(Pem.certificates(bundle, "ca.crt")).extracting(c -> c.getSubjectX500Principal().getName())
        .containsExactly("CN=metareactor test CA", "CN=localhost");
  }

  @Test
  void refusesWhatItCannotRead() {
    assertThatThrownBy(() -> Pem.privateKey(certs.encryptedKeyPem(), "tls.key"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("tls.key: encrypted keys are not supported");
    assertThatThrownBy(() -> Pem.privateKey(certs.caPem(), "tls.key"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("tls.key: no PEM private key found");
    assertThatThrownBy(() -> Pem.certificates("not pem", "ca.crt"))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ca.crt: no PEM certificate found");
    assertThatThrownBy(() -> Pem.certificates("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----", "ca"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("ca: unreadable certificate");
  }

  // On JDK 17 this also holds without TlsMaterials' restriction; TlsMinimumTest checks it where the JDK allows less.
  @Test
  void clientContextsSpeakTls12AndUpOnly() {
    SSLEngine engine = TlsMaterials.caBundle(certs.caPem()).clientContext().newEngine(ByteBufAllocator.DEFAULT);

    assertThat(engine.getEnabledProtocols()).containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
    assertThat(TlsMaterials.NONE.clientContext().newEngine(ByteBufAllocator.DEFAULT).getEnabledProtocols())
        .containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
  }

  @Test
  void aClientCertificateNeedsItsKey() {
    assertThatThrownBy(() -> new TlsMaterials(null, certs.client("pkcs8").certificatePem(), null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("both a certificate and a private key");
    assertThat(new TlsMaterials(null, "cert", "key").toString()).doesNotContain("key=")
        .contains("clientCertificate=true");
  }
}
