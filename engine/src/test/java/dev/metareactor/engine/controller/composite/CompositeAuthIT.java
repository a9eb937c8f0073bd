package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.tls.TestCerts;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.json.JsonMapper;

/**
 * Hooks behind TLS and credentials: a CA bundle (inline or from a ConfigMap), bearer tokens and basic auth from
 * Secrets, client certificates for mutual TLS, {@code endpointConfigs} matched by host, right and wrong
 * credentials, and credentials that change while the controller runs. The hook is an HTTPS server for
 * {@code localhost} that answers 401 unless the {@code Authorization} header is the expected one.
 */
class CompositeAuthIT extends CompositeTestBase {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private DisposableServer secure;

  @AfterEach
  void stopSecure() {
    if (secure != null) {
      secure.disposeNow();
    }
  }

  /** Starts the HTTPS hook; it accepts only {@code expectedAuthorization} (any, when null). */
  private String startSecureHook(ClientAuth clientAuth, String expectedAuthorization) throws Exception {
    TestCerts certs = TestCerts.shared();
    var server = SslContextBuilder.forServer(stream(certs.server().certificatePem()), stream(certs.server().keyPem()))
        .trustManager(stream(certs.caPem())).clientAuth(clientAuth).build();
    secure = HttpServer.create().host("localhost").port(0).secure(ssl -> ssl.sslContext(server))
        .route(routes -> routes.post("/sync", (request, response) -> {
          String authorization = request.requestHeaders().get("Authorization");
          if (expectedAuthorization != null && !expectedAuthorization.equals(authorization)) {
            return response.status(HttpResponseStatus.UNAUTHORIZED).sendString(Mono.just("who are you?")).then();
          }
          return request.receive().aggregate().asByteArray()
              .map(body -> JSON.writeValueAsBytes(hook.apply(JSON.readTree(body))))
              .flatMap(answer -> response.header("Content-Type", "application/json")
                  .sendByteArray(Mono.just(answer)).then());
        }))
        .bindNow();
    return "https://localhost:" + secure.port() + "/sync";
  }

  private static ByteArrayInputStream stream(String pem) {
    return new ByteArrayInputStream(pem.getBytes(StandardCharsets.UTF_8));
  }

  private void secret(String name, Map<String, String> data) {
    Map<String, String> encoded = new java.util.HashMap<>();
    data.forEach((key, value) -> encoded.put(key,
        Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))));
    client.secrets().resource(new SecretBuilder().withNewMetadata().withName(name).endMetadata()
        .withData(encoded).build()).serverSideApply();
  }

  /** A controller over {@code parents} whose hook is {@code url}, with {@code webhookExtra} inside its webhook. */
  private String authController(String url, String webhookExtra, String specExtra) {
    String name = "cc-auth-" + UUID.randomUUID().toString().substring(0, 6);
    engine.createController(controllerYaml(name, parents, "InPlace", url, webhookExtra + specExtra));
    return name;
  }

  private String inlineCa() throws Exception {
    return "        caBundle:\n          inline: |\n"
        + TestCerts.shared().caPem().lines().map(line -> "            " + line + "\n").reduce("", String::concat);
  }

  @Test
  void aBearerTokenFromASecretOpensTheHookAndAWrongOneIsASyncError() throws Exception {
    parents = ParentCrd.create(cluster, "Bearer");
    String url = startSecureHook(ClientAuth.NONE, "Bearer right-token");
    secret("good-token", Map.of("token", "right-token\n"));
    secret("bad-token", Map.of("token", "wrong-token"));
    String ns = cluster.namespace();
    for (String which : List.of("good", "bad")) {
      engine.createController(controllerYaml("cc-" + which + "-" + UUID.randomUUID().toString().substring(0, 6),
          parents, "InPlace", url, inlineCa() + "        authorization:\n          secretRef:\n            name: "
              + which + "-token\n            namespace: " + ns + "\n            key: token\n")
          .replace("    resource: " + parents.plural() + "\n", "    resource: " + parents.plural() + "\n"
              + "    labelSelector:\n      matchLabels:\n        auth: " + which + "\n"));
      var parent = parents.object(ns, which, spec(List.of("a"), "v1"));
      parent.getMetadata().setLabels(Map.of("auth", which));
      parents.in(client).resource(parent).create();
    }
    awaitChild("good-a", "v1");
    await().atMost(TIMEOUT).until(() -> hasSyncError("bad", "401"));
    assertThat(client.configMaps().withName("bad-a").get()).isNull();
  }

  @Test
  void basicAuthAndACaBundleFromAConfigMapComeFromTheMatchingEndpointConfig() throws Exception {
    parents = ParentCrd.create(cluster, "Basic");
    String url = startSecureHook(ClientAuth.NONE,
        "Basic " + Base64.getEncoder().encodeToString("alice:s3cret".getBytes(StandardCharsets.UTF_8)));
    secret("basic", Map.of("username", "alice", "password", "s3cret"));
    client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("hook-ca").endMetadata()
        .addToData("ca.crt", TestCerts.shared().caPem()).build()).create();
    String ns = cluster.namespace();
    authController(url, "", """
          endpointConfigs:
          - host: elsewhere.example.com
            authorization:
              secretRef: {name: nothing, namespace: %s, key: token}
          - host: localhost:%d
            caBundle:
              configMapRef: {name: hook-ca, namespace: %s}
            basicAuth:
              secretRef: {name: basic, namespace: %s}
        """.formatted(ns, secure.port(), ns, ns));
    createParent("basic", List.of("a"), "v1");
    awaitChild("basic-a", "v1");
  }

  @Test
  void mutualTlsWithAClientCertificateFromASecret() throws Exception {
    parents = ParentCrd.create(cluster, "Mutual");
    String url = startSecureHook(ClientAuth.REQUIRE, null);
    TestCerts.Pair client = TestCerts.shared().client("pkcs8");
    secret("client-tls", Map.of("tls.crt", client.certificatePem(), "tls.key", client.keyPem()));
    String ns = cluster.namespace();
    String withCertificate = authController(url, inlineCa() + "        clientTLS:\n          secretRef:\n"
        + "            name: client-tls\n            namespace: " + ns + "\n", "");
    createParent("mutual", List.of("a"), "v1");
    awaitChild("mutual-a", "v1");

    // The same hook without a client certificate: the handshake fails, and the parent says so.
    engine.deleteController(withCertificate);
    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", withCertificate, "Stopped", "Stopped"));
    authController(url, inlineCa(), "");
    setSpec("mutual", List.of("a", "b"), "v1");
    await().atMost(TIMEOUT).until(() -> hasSyncError("mutual", "Sync error: "));
    assertThat(this.client.configMaps().withName("mutual-b").get()).isNull();
  }

  @Test
  void aBearerTokenSentOverPlainHttpWorksAndTheControllerIsWarnedOnce() {
    parents = ParentCrd.create(cluster, "Plain");
    secret("plain-token", Map.of("token", "plain-s3cret"));
    String ns = cluster.namespace();
    String controller = authController(hooks.url("/sync"), "        authorization:\n          secretRef:\n"
        + "            name: plain-token\n            namespace: " + ns + "\n            key: token\n", "");
    createParent("plain", List.of("a"), "v1");
    awaitChild("plain-a", "v1");
    // Credentials read again (the Secret changed) and more syncs: still one warning.
    secret("plain-token", Map.of("token", "plain-s3cret-2"));
    setSpec("plain", List.of("a", "b"), "v1");
    awaitChild("plain-b", "v1");

    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", controller, "InsecureCredentials",
        "sync hook " + hooks.url("/sync") + " sends Bearer credentials over plain http"));
    assertThat(engine.eventsAbout("default", controller)).filteredOn(e -> e.getReason().equals("InsecureCredentials"))
        .singleElement().satisfies(e -> {
          assertThat(e.getType()).isEqualTo("Warning");
          assertThat(e.getCount()).isEqualTo(1);
          assertThat(e.getMessage()).doesNotContain("plain-s3cret");
        });
  }

  @Test
  void credentialsThatAppearOrChangeAreUsedWithoutRestartingTheController() throws Exception {
    parents = ParentCrd.create(cluster, "Rotate");
    String url = startSecureHook(ClientAuth.NONE, "Bearer second");
    String ns = cluster.namespace();
    String controller = authController(url, inlineCa() + "        authorization:\n          secretRef:\n"
        + "            name: rotating\n            namespace: " + ns + "\n            key: token\n", "");
    createParent("rotate", List.of("a"), "v1");

    // The Secret does not exist yet: every call fails saying so, and the controller says it once.
    await().atMost(TIMEOUT).until(() -> hasSyncError("rotate",
        "can't resolve authorization: secret " + ns + "/rotating not found"));
    await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", controller, "SyncError",
        "secret " + ns + "/rotating not found"));

    secret("rotating", Map.of("token", "first"));
    await().atMost(TIMEOUT).until(() -> hasSyncError("rotate", "401"));
    secret("rotating", Map.of("token", "second"));
    awaitChild("rotate-a", "v1");
    assertThat(engine.eventsAbout("default", controller)).filteredOn(e -> e.getReason().equals("Started"))
        .singleElement().satisfies(e -> assertThat(e.getCount()).as("started once, never rebuilt").isEqualTo(1));
  }
}
