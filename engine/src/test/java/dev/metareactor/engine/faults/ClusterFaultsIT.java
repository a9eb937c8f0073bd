package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.kube.KubeConfig;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faults of the cluster around the engine, under the {@link FaultLoad} (with fewer parents), each followed by the
 * same {@link Invariants}: the service-account token revoked and rotated while the engine runs.
 */
class ClusterFaultsIT extends FaultSuite {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterFaultsIT.class);
  private static final int PARENTS = 100;

  @Override
  int parentCount() {
    return PARENTS;
  }

  /**
   * The engine runs as in a pod, from a projected service-account directory, with a token bound to a Secret. The
   * old token is revoked (its Secret deleted), the kubelet's rotation is played out (a new token written by the
   * atomic swap of {@code ..data}) and every watch has to connect again (the API server restarted): the engine reads
   * the new token on the first 401 — a list's, a write's or a watch's; it would otherwise wait for its periodic
   * re-read, a minute at most — so the API server refuses it only a few times, and everything converges through an
   * update wave. (Which re-read comes first depends on when the periodic one falls; {@code KubeApiTest} and
   * {@code KubeConfigTest} show each path on its own.)
   */
  @Test
  void aRotatedAndRevokedServiceAccountTokenIsReadAgainOnTheFirst401WithoutAStorm() throws Exception {
    String account = "engine";
    load.cluster.kubectl("create", "serviceaccount", account).orThrow();
    load.cluster.deleteAfterTest(load.client.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder()
        .withNewMetadata().withName(load.cluster.namespace() + "-" + account).endMetadata()
        .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", "cluster-admin")
        .addNewSubject().withKind("ServiceAccount").withName(account).withNamespace(load.cluster.namespace())
        .endSubject().build()).create());
    ServiceAccountDirectory projected = new ServiceAccountDirectory(logs().resolve("serviceaccount"),
        new String(Base64.getDecoder().decode(load.client.getConfiguration().getCaCertData()),
            StandardCharsets.UTF_8), load.cluster.namespace());
    String first = boundToken(account, "token-1");
    projected.write(first);
    URI server = URI.create(load.client.getConfiguration().getMasterUrl());
    Map<String, String> pod = Map.of("KUBERNETES_SERVICE_HOST", server.getHost(),
        "KUBERNETES_SERVICE_PORT", Integer.toString(server.getPort()),
        KubeConfig.SERVICE_ACCOUNT_DIR_ENV, projected.path().toString(),
        "KUBECONFIG", logs().resolve("no-kubeconfig").toString());
    load.createControllers();
    load.createObjects("one");
    try (EngineProcess engine = inClusterEngine("engine", pod)) {
      awaitInvariants();

      String second = boundToken(account, "token-2");
      load.cluster.kubectl("delete", "secret", "token-1").orThrow();
      // The API server keeps a valid token's verdict for up to 10 s. The new token is written once the old one is
      // refused, as the API server goes: whatever connects again finds a refused token first.
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
          .until(() -> refused(first));
      long revoked = System.nanoTime();
      projected.write(second);
      load.cluster.controlPlane().restart("kube-apiserver", "--kill");
      awaitInvariants();
      Duration ready = Duration.ofNanos(System.nanoTime() - revoked);
      load.setValue("two");
      Duration converged = awaitInvariants();
      // Counted by the restarted API server: nobody but the engine presented a token since.
      double refused = refusedByTheApiServer();
      long rereads = engine.lines().stream().filter(line -> line.contains("refused the credentials")).count();
      LOG.info("token rotated and the old one revoked: the API server refused the engine {} times ({} re-reads "
          + "after a 401); ready again {} ms after the revocation and the API server's restart, an update wave {} ms",
          refused, rereads, ready.toMillis(), converged.toMillis());
      assertThat(refused).as("requests the API server refused (401) after the rotation")
          .isLessThanOrEqualTo(MAX_REFUSED);
      assertThat(engine.output()).doesNotContain("Forbidden");
    }
  }

  /**
   * How many 401s the rotation may cost at most: one per informer (a dozen) and per request in flight
   * ({@code --api-concurrency}, 32), twice for good measure. A token the engine never read again would be refused on
   * every watch retry and every write until its next periodic re-read: hundreds.
   */
  private static final double MAX_REFUSED = 2 * (12 + 32);

  /** A token of {@code account} that is valid only while the Secret {@code secret} exists (created now). */
  private String boundToken(String account, String secret) {
    load.cluster.kubectl("create", "secret", "generic", secret).orThrow();
    return load.cluster.kubectl("create", "token", account, "--bound-object-kind=Secret",
        "--bound-object-name=" + secret, "--duration=1h").orThrow().strip();
  }

  /**
   * Whether the API server refuses {@code token} (401). Asked with a plain HTTP client: a Kubernetes client would
   * fall back on the kubeconfig's credentials after a 401.
   */
  private boolean refused(String token) throws Exception {
    KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
    trusted.load(null, null);
    trusted.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(
        new ByteArrayInputStream(Base64.getDecoder().decode(load.client.getConfiguration().getCaCertData()))));
    TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(trusted);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, trust.getTrustManagers(), null);
    HttpRequest request = HttpRequest.newBuilder(URI.create(load.client.getConfiguration().getMasterUrl()
        .replaceAll("/$", "") + "/api/v1/namespaces/" + load.cluster.namespace()))
        .header("Authorization", "Bearer " + token).build();
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(ssl).build()
        .send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 401;
  }

  /** Requests the API server refused to authenticate so far ({@code authentication_attempts}, not successes). */
  private double refusedByTheApiServer() {
    Pattern attempts = Pattern.compile("^authentication_attempts\\{result=\"(\\w+)\"} ([0-9.eE+-]+)$");
    double refused = 0;
    for (String line : load.cluster.kubectl("get", "--raw", "/metrics").orThrow().lines().toList()) {
      Matcher matcher = attempts.matcher(line);
      if (matcher.matches() && !matcher.group(1).equals("success")) {
        refused += Double.parseDouble(matcher.group(2));
      }
    }
    return refused;
  }
}
