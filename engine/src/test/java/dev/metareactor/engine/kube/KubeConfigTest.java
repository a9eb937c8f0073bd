package dev.metareactor.engine.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.metareactor.http.tls.TestCerts;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the engine finds and reads its API server configuration, as client-go would. */
class KubeConfigTest {

  @TempDir
  Path dir;

  private static String b64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  private Path kubeconfig(String name, String clusters, String users, String current) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(file, "apiVersion: v1\nkind: Config\n"
        + (current == null ? "" : "current-context: " + current + "\n")
        + "clusters:\n" + clusters + "users:\n" + users
        + "contexts:\n- name: main\n  context: {cluster: c, user: u}\n- name: other\n  context: {cluster: c2, user:"
        + " u2}\n");
    return file;
  }

  @Test
  void clientCertificatesAndAnInlineCaMakeTheTlsContext() throws Exception {
    TestCerts certs = TestCerts.shared();
    TestCerts.Pair client = certs.client("pkcs8");
    Path file = kubeconfig("config", "- name: c\n  cluster:\n    server: https://127.0.0.1:6443/\n"
        + "    certificate-authority-data: " + b64(certs.caPem()) + "\n",
        "- name: u\n  user:\n    client-certificate-data: " + b64(client.certificatePem()) + "\n"
        + "    client-key-data: " + b64(client.keyPem()) + "\n", "main");
    KubeConfig config = KubeConfig.fromFiles(List.of(file), Map.of());
    assertThat(config.server().toString()).isEqualTo("https://127.0.0.1:6443");
    assertThat(config.ssl()).isNotNull();
    assertThat(config.authorization()).isNull();
    assertThat(config.refreshIn()).isNull();
  }

  @Test
  void filesNamedInAKubeconfigAreRelativeToIt() throws Exception {
    TestCerts certs = TestCerts.shared();
    Files.createDirectories(dir.resolve("pki"));
    Files.writeString(dir.resolve("pki/ca.crt"), certs.caPem());
    Files.writeString(dir.resolve("pki/token"), "secret-1\n");
    Path file = kubeconfig("config", "- name: c\n  cluster: {server: 'https://k8s.example:443', "
        + "certificate-authority: pki/ca.crt}\n", "- name: u\n  user: {tokenFile: pki/token}\n", "main");
    KubeConfig config = KubeConfig.fromFiles(List.of(file), Map.of());
    assertThat(config.authorization()).isEqualTo("Bearer secret-1");
    // A token file is read again every minute, and when the server says the token is no good any more.
    assertThat(config.refreshIn()).isBetween(Duration.ofSeconds(50), Duration.ofSeconds(61));
    Files.writeString(dir.resolve("pki/token"), "secret-2\n");
    config.refreshCredentials();
    assertThat(config.authorization()).isEqualTo("Bearer secret-2");
  }

  /**
   * A token refused with 401 is read again once for every request it failed (they all come back with the same
   * header), and a token that is still the one refused is not read again within a second: a file the kubelet has
   * not rotated yet is not read for each refused request.
   */
  @Test
  void aRefusedTokenIsReadAgainOnceForAllTheRequestsItFailedAndAtMostOnceASecond() throws Exception {
    Files.writeString(dir.resolve("token"), "secret-1\n");
    Path file = kubeconfig("config", "- name: c\n  cluster: {server: 'http://127.0.0.1:8080'}\n",
        "- name: u\n  user: {tokenFile: token}\n", "main");
    KubeConfig config = KubeConfig.fromFiles(List.of(file), Map.of());
    Files.writeString(dir.resolve("token"), "secret-2\n");
    config.refreshRejected("Bearer secret-1");
    assertThat(config.authorization()).as("read again after the 401").isEqualTo("Bearer secret-2");

    Files.writeString(dir.resolve("token"), "secret-3\n");
    config.refreshRejected("Bearer secret-1");
    assertThat(config.authorization()).as("another request refused with the old token: read already")
        .isEqualTo("Bearer secret-2");
    config.refreshRejected("Bearer secret-2");
    assertThat(config.authorization()).as("the new token refused less than a second after it was read")
        .isEqualTo("Bearer secret-2");
    config.refreshCredentials();
    assertThat(config.authorization()).as("the periodic re-read is not limited").isEqualTo("Bearer secret-3");
  }

  @Test
  void tokensAndBasicCredentialsBecomeTheAuthorizationHeader() throws Exception {
    Path token = kubeconfig("token", "- name: c\n  cluster: {server: 'http://127.0.0.1:8080'}\n",
        "- name: u\n  user: {token: abc}\n", "main");
    KubeConfig bearer = KubeConfig.fromFiles(List.of(token), Map.of());
    assertThat(bearer.authorization()).isEqualTo("Bearer abc");
    assertThat(bearer.ssl()).isNull();
    Path basic = kubeconfig("basic", "- name: c\n  cluster: {server: 'http://127.0.0.1:8080'}\n",
        "- name: u\n  user: {username: admin, password: 's3cret'}\n", "main");
    assertThat(KubeConfig.fromFiles(List.of(basic), Map.of()).authorization())
        .isEqualTo("Basic " + b64("admin:s3cret"));
  }

  @Test
  void anExecPluginsTokenIsUsedAndRenewedBeforeItExpires() throws Exception {
    Path plugin = dir.resolve("plugin.sh");
    // The plugin proves it was told it runs non-interactively, as client-go tells it.
    Files.writeString(plugin,
        "#!/bin/sh\ncase \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 3;; esac\n"
        + "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
        + "\"status\":{\"token\":\"'\"$TOKEN\"'\",\"expirationTimestamp\":\"2099-01-01T00:00:00Z\"}}'\n");
    Files.setPosixFilePermissions(plugin, PosixFilePermissions.fromString("rwx------"));
    Path file = kubeconfig("exec", "- name: c\n  cluster: {server: 'http://127.0.0.1:8080'}\n",
        "- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
        + "      command: ./plugin.sh\n      env: [{name: TOKEN, value: from-plugin}]\n", "main");
    KubeConfig config = KubeConfig.fromFiles(List.of(file), Map.of());
    assertThat(config.authorization()).isEqualTo("Bearer from-plugin");
    assertThat(config.refreshIn()).isGreaterThan(Duration.ofDays(365));
  }

  @Test
  void severalKubeconfigsMergeWithTheFirstDefinitionWinning() throws Exception {
    Path first = kubeconfig("first", "- name: c\n  cluster: {server: 'http://first:1'}\n",
        "- name: u\n  user: {token: first}\n", null);
    Path second = kubeconfig("second", "- name: c\n  cluster: {server: 'http://second:2'}\n"
        + "- name: c2\n  cluster: {server: 'http://other:3'}\n",
        "- name: u\n  user: {token: second}\n- name: u2\n  user: {token: other}\n", "other");
    KubeConfig merged = KubeConfig.load("", Map.of("KUBECONFIG", first + ":" + second), dir, dir.resolve("none"));
    assertThat(merged.server().toString()).isEqualTo("http://other:3");
    assertThat(merged.authorization()).isEqualTo("Bearer other");
    // --kubeconfig names one file and nothing is merged into it.
    Path third = kubeconfig("third", "- name: c\n  cluster: {server: 'http://third:4'}\n",
        "- name: u\n  user: {token: third}\n", "main");
    KubeConfig explicit = KubeConfig.load(third.toString(), Map.of("KUBECONFIG", first + ":" + second), dir, dir);
    assertThat(explicit.server().toString()).isEqualTo("http://third:4");
    assertThat(explicit.authorization()).isEqualTo("Bearer third");
    assertThatThrownBy(() -> KubeConfig.fromFiles(List.of(first), Map.of()))
        .hasMessageContaining("no current-context");
  }

  @Test
  void insideAPodTheServiceAccountIsUsed() throws Exception {
    Path account = Files.createDirectories(dir.resolve("serviceaccount"));
    Files.writeString(account.resolve("token"), "pod-token");
    Files.writeString(account.resolve("ca.crt"), TestCerts.shared().caPem());
    KubeConfig config = KubeConfig.load("", Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1",
        "KUBERNETES_SERVICE_PORT", "443", "KUBECONFIG", "/nonexistent"), dir, account);
    assertThat(config.server().toString()).isEqualTo("https://10.0.0.1:443");
    assertThat(config.authorization()).isEqualTo("Bearer pod-token");
    assertThat(config.ssl()).isNotNull();
  }

  @Test
  void aUserWithAnAuthProviderIsRefusedNamingIt() throws Exception {
    Path file = kubeconfig("config", "- name: c\n  cluster: {server: 'https://k8s.example:443'}\n",
        "- name: u\n  user:\n    token: also-there\n    auth-provider: {name: gcp, config: {cmd-path: gcloud}}\n",
        "main");

    assertThatThrownBy(() -> KubeConfig.fromFiles(List.of(file), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kubeconfig: the user's auth-provider \"gcp\" is not supported; use an exec credential plugin");
  }

  @Test
  void whatIsMissingIsNamed() throws Exception {
    assertThatThrownBy(() -> KubeConfig.load("", Map.of(), dir, dir.resolve("none")))
        .hasMessageContaining("no Kubernetes configuration");
    Path file = kubeconfig("config", "- name: c\n  cluster: {server: 'http://a:1'}\n", "- name: u\n  user: {}\n",
        "missing");
    assertThatThrownBy(() -> KubeConfig.fromFiles(List.of(file), Map.of()))
        .hasMessageContaining("context \"missing\" is not defined");
  }
}
