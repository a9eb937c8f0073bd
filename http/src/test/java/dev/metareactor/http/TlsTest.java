package dev.metareactor.http;

import static dev.metareactor.http.Fixtures.ROOT;
import static dev.metareactor.http.Fixtures.SYNC;
import static dev.metareactor.http.Fixtures.fail;
import static dev.metareactor.http.Fixtures.json;
import static dev.metareactor.http.Fixtures.request;
import static dev.metareactor.http.Fixtures.succeed;
import static dev.metareactor.http.ScriptedServer.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.http.HookCallException.Reason;
import dev.metareactor.http.tls.Pem;
import dev.metareactor.http.tls.TestCerts;
import dev.metareactor.http.tls.TlsMaterials;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class TlsTest extends ScriptedHookTest {

  private static TestCerts certs;

  @BeforeAll
  static void certificates() throws Exception {
    certs = TestCerts.shared();
  }

  private static SslContext serverContext(ClientAuth clientAuth) throws SSLException {
    TestCerts.Pair server = certs.server();
    return SslContextBuilder
        .forServer(Pem.privateKey(server.keyPem(), "server key"),
            Pem.certificates(server.certificatePem(), "server cert").toArray(X509Certificate[]::new))
        .trustManager(Pem.certificates(certs.caPem(), "ca").toArray(X509Certificate[]::new))
        .clientAuth(clientAuth)
        .build();
  }

  private Hook secureHook(ClientAuth clientAuth, TlsMaterials tls) throws SSLException {
    server = ScriptedServer.startSecure(serverContext(clientAuth), ok("{\"secure\":true}"));
    return client.hook(WebhookSpec.of(server.url("/sync")).withTls(tls), SYNC);
  }

  @Test
  void trustsTheHookThroughACustomCaBundle() throws SSLException {
    Hook hook = secureHook(ClientAuth.NONE, TlsMaterials.caBundle(certs.caPem()));

    assertThat(succeed(hook.call(request(), ROOT)).body()).isEqualTo(json("{\"secure\":true}"));
  }

  @Test
  void withoutTheCaBundleTheHookIsNotTrustedAndNotRetried() throws SSLException {
    Hook hook = secureHook(ClientAuth.NONE, TlsMaterials.NONE);

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.TLS);
    assertThat(failure.detail()).startsWith("tls error: ");
    assertThat(failure.attempts()).isEqualTo(1);
    assertThat(server.requests()).isEmpty();
  }

  @Test
  void checksTheHostName() throws SSLException {
    server = ScriptedServer.startSecure(serverContext(ClientAuth.NONE), ok("{}"));
    // The certificate names localhost only.
    WebhookSpec spec = WebhookSpec.of("https://127.0.0.1:" + server.port() + "/sync")
        .withTls(TlsMaterials.caBundle(certs.caPem()));

    HookCallException failure = fail(client.hook(spec, SYNC).call(request(), ROOT));

    assertThat(failure.reason()).isEqualTo(Reason.TLS);
    assertThat(server.requests()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"pkcs1", "sec1", "pkcs8"})
  void presentsAClientCertificateForMutualTls(String keyForm) throws SSLException {
    TestCerts.Pair clientCert = certs.client(keyForm);
    Hook hook = secureHook(ClientAuth.REQUIRE,
        new TlsMaterials(certs.caPem(), clientCert.certificatePem(), clientCert.keyPem()));

    assertThat(succeed(hook.call(request(), ROOT)).body()).isEqualTo(json("{\"secure\":true}"));
  }

  @Test
  void withoutAClientCertificateMutualTlsFails() throws SSLException {
    Hook hook = secureHook(ClientAuth.REQUIRE, TlsMaterials.caBundle(certs.caPem()));

    HookCallException failure = fail(hook.call(request(), ROOT));

    assertThat(failure.reason()).as(failure.getMessage()).isEqualTo(Reason.TLS);
    assertThat(server.requests()).isEmpty();
    assertThat(hook.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }

  /** Each pair of algorithms: RSA with another RSA key (another modulus), EC with another EC key, and each crossed. */
  @ParameterizedTest
  @CsvSource({"pkcs1, server", "pkcs1, pkcs8", "sec1, pkcs8", "sec1, pkcs1"})
  void aClientKeyOfAnotherCertificateIsRejectedWhenTheHookIsPrepared(String certificateOf, String keyOf) {
    TlsMaterials swapped = new TlsMaterials(certs.caPem(), certs.client(certificateOf).certificatePem(),
        keyOf.equals("server") ? certs.server().keyPem() : certs.client(keyOf).keyPem());
    WebhookSpec spec = WebhookSpec.of("https://localhost:1/sync").withTls(swapped);

    assertThatThrownBy(() -> client.hook(spec, SYNC))
        .isInstanceOf(InvalidWebhookException.class)
        .hasMessage("invalid webhook config: clientTLS key: does not belong to the certificate CN=client-"
            + certificateOf);
  }

  @Test
  void unusableMaterialsAreRejectedWhenTheHookIsPrepared() {
    WebhookSpec spec = WebhookSpec.of("https://localhost:1/sync").withTls(TlsMaterials.caBundle("garbage"));

    assertThatThrownBy(() -> client.hook(spec, SYNC))
        .isInstanceOf(InvalidWebhookException.class)
        .hasMessage("invalid webhook config: caBundle: no PEM certificate found");
  }
}
