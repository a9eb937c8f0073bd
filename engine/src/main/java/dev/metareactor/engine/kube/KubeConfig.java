package dev.metareactor.engine.kube;

import dev.metareactor.http.tls.Pem;
import dev.metareactor.http.tls.TlsMaterials;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Where the API server is and how the engine authenticates to it, resolved the way client-go resolves it for
 * Metacontroller:
 *
 * <ul>
 *   <li>{@code --kubeconfig=<file>}: that file;</li>
 *   <li>else, inside a pod, the pod's service account ({@code KUBERNETES_SERVICE_HOST}, its token and CA);</li>
 *   <li>else the files of {@code KUBECONFIG} (several, merged: the first to define a cluster, user, context or
 *       current context wins) or {@code ~/.kube/config}.</li>
 * </ul>
 *
 * <p>From a kubeconfig: the current context's cluster ({@code server}, {@code certificate-authority} or
 * {@code -data}, {@code insecure-skip-tls-verify}) and user (client certificate and key, {@code token},
 * {@code tokenFile}, {@code username}/{@code password}, or an {@code exec} credential plugin returning a token).
 * Relative paths are relative to the kubeconfig's directory. {@code tls-server-name} and {@code proxy-url} are not
 * supported: each is ignored with a warning. A user with a legacy {@code auth-provider} is refused: client-go runs
 * the provider or fails to build its client, and going on without it would only make every request fail as
 * unauthorized.
 *
 * <p>Reading the credentials ({@link #authorization()}) never blocks: they are resolved ahead —
 * {@link #refreshCredentials()} re-reads a token file or re-runs an exec plugin, and {@link KubeApi} calls it every
 * minute for a token file and when an exec token's expiry comes near; {@link #refreshRejected} does the same when
 * the server answers 401 (a rotated service-account token, an expired plugin token).
 */
public final class KubeConfig {

  private static final Logger LOG = LoggerFactory.getLogger(KubeConfig.class);
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  private static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");
  /** Moves the service-account directory: for a token projected elsewhere, and for tests outside a pod. */
  public static final String SERVICE_ACCOUNT_DIR_ENV = "METAREACTOR_SERVICE_ACCOUNT_DIR";

  private final URI server;
  private final @Nullable SslContext ssl;
  private final Credentials credentials;

  private KubeConfig(URI server, @Nullable SslContext ssl, Credentials credentials) {
    this.server = server;
    this.ssl = ssl;
    this.credentials = credentials;
  }

  /**
   * The configuration of {@code --kubeconfig}: that file, or, when blank, the pod's service account, else
   * {@code KUBECONFIG} or {@code ~/.kube/config}.
   *
   * @throws IllegalArgumentException naming what is missing or unreadable
   */
  public static KubeConfig load(String kubeconfig) {
    return load(kubeconfig, System.getenv(), Path.of(System.getProperty("user.home")), serviceAccountDirectory());
  }

  /**
   * Where the pod's service account is mounted ({@code token}, {@code ca.crt}, {@code namespace}): the kubelet's
   * path, or {@value #SERVICE_ACCOUNT_DIR_ENV} when set.
   */
  public static Path serviceAccountDirectory() {
    String moved = System.getenv(SERVICE_ACCOUNT_DIR_ENV);
    return moved == null || moved.isBlank() ? SERVICE_ACCOUNT : Path.of(moved);
  }

  static KubeConfig load(String kubeconfig, Map<String, String> env, Path home, Path serviceAccount) {
    if (kubeconfig != null && !kubeconfig.isBlank()) {
      return fromFiles(List.of(Path.of(kubeconfig)), env);
    }
    String host = env.get("KUBERNETES_SERVICE_HOST");
    if (host != null && !host.isBlank() && Files.isReadable(serviceAccount.resolve("token"))) {
      return inCluster(host, env.getOrDefault("KUBERNETES_SERVICE_PORT", "443"), serviceAccount);
    }
    String paths = env.get("KUBECONFIG");
    List<Path> files = new ArrayList<>();
    if (paths != null && !paths.isBlank()) {
      for (String path : paths.split(File.pathSeparator)) {
        if (!path.isBlank() && Files.isReadable(Path.of(path))) {
          files.add(Path.of(path));
        }
      }
    } else if (Files.isReadable(home.resolve(".kube/config"))) {
      files.add(home.resolve(".kube/config"));
    }
    if (files.isEmpty()) {
      throw new IllegalArgumentException("no Kubernetes configuration: not in a pod, and neither --kubeconfig, "
          + "KUBECONFIG nor ~/.kube/config names a readable file");
    }
    return fromFiles(files, env);
  }

  /** The pod's service account: the token is re-read as the kubelet rotates it. */
  static KubeConfig inCluster(String host, String port, Path serviceAccount) {
    String hostPart = host.contains(":") ? "[" + host + "]" : host;
    URI server = URI.create("https://" + hostPart + ":" + port);
    SslContext ssl = new TlsMaterials(read(serviceAccount.resolve("ca.crt"), "service-account CA"), null, null)
        .clientContext();
    return new KubeConfig(server, ssl, Credentials.tokenFile(serviceAccount.resolve("token")));
  }

  /** Kubeconfig files, merged as client-go does: the first definition of each name wins. */
  static KubeConfig fromFiles(List<Path> files, Map<String, String> env) {
    YAMLMapper yaml = YAMLMapper.builder().build();
    String currentContext = "";
    Map<String, Named> contexts = new HashMap<>();
    Map<String, Named> clusters = new HashMap<>();
    Map<String, Named> users = new HashMap<>();
    for (Path file : files) {
      JsonNode config;
      try {
        config = yaml.readTree(Files.readString(file, StandardCharsets.UTF_8));
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException("cannot read kubeconfig " + file + ": " + e.getMessage(), e);
      }
      if (config == null || config.isMissingNode() || config.isNull()) {
        continue;
      }
      if (currentContext.isEmpty()) {
        currentContext = config.path("current-context").asString("");
      }
      Path dir = Objects.requireNonNull(file.toAbsolutePath().getParent(), "an absolute file path has a parent");
      collect(config.path("contexts"), "context", dir, contexts);
      collect(config.path("clusters"), "cluster", dir, clusters);
      collect(config.path("users"), "user", dir, users);
    }
    String where = files.size() == 1 ? "kubeconfig " + files.get(0) : "kubeconfigs " + files;
    if (currentContext.isEmpty()) {
      throw new IllegalArgumentException(where + " has no current-context");
    }
    Named context = required(contexts, currentContext, "context", where);
    String clusterName = context.value().path("cluster").asString("");
    Named cluster = required(clusters, clusterName, "cluster", where);
    String userName = context.value().path("user").asString("");
    Named user = userName.isEmpty() ? new Named(KubeJson.nodes().objectNode(), cluster.dir())
        : required(users, userName, "user", where);
    return of(cluster, user, env);
  }

  /** A kubeconfig entry and the directory its relative paths are relative to. */
  private record Named(JsonNode value, Path dir) {}

  private static void collect(JsonNode list, String field, Path dir, Map<String, Named> into) {
    for (JsonNode entry : list) {
      String name = entry.path("name").asString("");
      if (!name.isEmpty() && !into.containsKey(name)) {
        into.put(name, new Named(entry.path(field), dir));
      }
    }
  }

  private static Named required(Map<String, Named> all, String name, String what, String where) {
    Named named = all.get(name);
    if (named == null) {
      throw new IllegalArgumentException(where + ": " + what + " \"" + name + "\" is not defined");
    }
    return named;
  }

  private static KubeConfig of(Named cluster, Named user, Map<String, String> env) {
    JsonNode c = cluster.value();
    String serverText = c.path("server").asString("");
    if (serverText.isBlank()) {
      throw new IllegalArgumentException("the cluster has no server");
    }
    URI server = URI.create(serverText.endsWith("/") ? serverText.substring(0, serverText.length() - 1) : serverText);
    for (String unsupported : List.of("tls-server-name", "proxy-url")) {
      if (c.hasNonNull(unsupported)) {
        LOG.warn("kubeconfig: cluster {} is not supported and is ignored", unsupported);
      }
    }
    JsonNode u = user.value();
    SslContext ssl = null;
    if ("https".equalsIgnoreCase(server.getScheme())) {
      String cert = pem(u, "client-certificate", user.dir());
      String key = pem(u, "client-key", user.dir());
      ssl = c.path("insecure-skip-tls-verify").asBoolean(false) ? insecure(cert, key)
          : new TlsMaterials(pem(c, "certificate-authority", cluster.dir()), cert == null || key == null ? null : cert,
              cert == null || key == null ? null : key).clientContext();
    }
    return new KubeConfig(server, ssl, credentials(u, user.dir(), env));
  }

  private static Credentials credentials(JsonNode user, Path dir, Map<String, String> env) {
    if (user.hasNonNull("auth-provider")) {
      String provider = user.path("auth-provider").path("name").asString("");
      throw new IllegalArgumentException("kubeconfig: the user's auth-provider \"" + provider
          + "\" is not supported; use an exec credential plugin");
    }
    if (user.hasNonNull("exec")) {
      return Credentials.exec(user.get("exec"), dir, env);
    }
    if (!user.path("token").asString("").isEmpty()) {
      return Credentials.header("Bearer " + user.get("token").asString());
    }
    if (!user.path("tokenFile").asString("").isEmpty()) {
      return Credentials.tokenFile(dir.resolve(user.get("tokenFile").asString()));
    }
    if (!user.path("username").asString("").isEmpty()) {
      String pair = user.get("username").asString() + ":" + user.path("password").asString("");
      return Credentials.header("Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8)));
    }
    return Credentials.NONE;
  }

  /** PEM from {@code <field>-data} (base64) or the file {@code <field>}; {@code null} when neither is set. */
  private static @Nullable String pem(JsonNode node, String field, Path dir) {
    String data = node.path(field + "-data").asString("");
    if (!data.isBlank()) {
      return new String(Base64.getMimeDecoder().decode(data.trim()), StandardCharsets.UTF_8);
    }
    String file = node.path(field).asString("");
    return file.isBlank() ? null : read(dir.resolve(file), field);
  }

  private static String read(Path file, String what) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + what + " " + file + ": " + e.getMessage(), e);
    }
  }

  /** {@code insecure-skip-tls-verify}: any server certificate, with the client certificate if there is one. */
  private static SslContext insecure(@Nullable String cert, @Nullable String key) {
    try {
      SslContextBuilder builder = SslContextBuilder.forClient().protocols("TLSv1.3", "TLSv1.2")
          .trustManager(InsecureTrustManagerFactory.INSTANCE);
      if (cert != null && key != null) {
        builder.keyManager(Pem.privateKey(key, "client-key"),
            Pem.certificates(cert, "client-certificate").toArray(X509Certificate[]::new));
      }
      return builder.build();
    } catch (SSLException e) {
      throw new IllegalArgumentException("TLS configuration rejected: " + e.getMessage(), e);
    }
  }

  public URI server() {
    return server;
  }

  /** The TLS context, or {@code null} for a plain-HTTP server. */
  public @Nullable SslContext ssl() {
    return ssl;
  }

  /** How long one request may take, answer included. */
  public Duration requestTimeout() {
    return REQUEST_TIMEOUT;
  }

  /** The {@code Authorization} header value, or {@code null} when client certificates alone authenticate. */
  public @Nullable String authorization() {
    return credentials.header();
  }

  /**
   * When the credentials should be resolved again ahead of time (an exec token's expiry), if ever. Non-blocking.
   */
  @Nullable Duration refreshIn() {
    return credentials.refreshIn();
  }

  /**
   * Resolves the credentials again (re-reads a token file, re-runs an exec plugin). Blocking: call it off the
   * event loops. A failure keeps the previous credentials and is logged.
   */
  public void refreshCredentials() {
    credentials.refresh();
  }

  /**
   * The API server refused {@code rejected} (the {@code Authorization} header a request carried, {@code null} for
   * none) with 401: resolves the credentials again, unless that happened since the request was sent (the header is
   * no longer {@code rejected}: every request in flight when a token stopped working gets its 401, and one re-read
   * serves them all) or less than {@value Credentials#MIN_REFRESH_MILLIS} ms ago (a token file not rotated yet, an
   * exec plugin answering the same token, is not read or run again for each refused request). Blocking: call it off
   * the event loops.
   */
  public void refreshRejected(@Nullable String rejected) {
    credentials.refreshRejected(rejected);
  }

  /** How the engine proves who it is, resolved ahead so that reading it never blocks. */
  private static final class Credentials {

    static final Credentials NONE = new Credentials(null, null, null, Duration.ZERO);
    /** How long a token read from a file is used before the file is read again. */
    static final Duration TOKEN_FILE_REREAD = Duration.ofMinutes(1);
    /** The least time between two re-reads after a 401. */
    static final long MIN_REFRESH_MILLIS = 1000;

    private final @Nullable String fixed;
    private final @Nullable Function<Credentials, String> resolve;
    private final @Nullable String source;
    /** How long before {@link #expires} to resolve again. */
    private final Duration margin;
    private volatile @Nullable String header;
    private volatile java.time.@Nullable Instant expires;
    /**
     * When (nanoTime) the credentials were last resolved again; under the lock. Not at their first resolution: a
     * 401 just after the start may be a token rotated meanwhile.
     */
    private long resolvedAt = System.nanoTime() - Duration.ofMillis(MIN_REFRESH_MILLIS).toNanos();

    private Credentials(@Nullable String fixed, @Nullable Function<Credentials, String> resolve,
        @Nullable String source, Duration margin) {
      this.fixed = fixed;
      this.resolve = resolve;
      this.source = source;
      this.margin = margin;
      this.header = fixed;
    }

    /** A fixed {@code Authorization} header (a token or basic credentials written in the kubeconfig). */
    static Credentials header(String header) {
      return new Credentials(header, null, null, Duration.ZERO);
    }

    /** A token in a file that may be rotated: read again every minute (as client-go does) and after a 401. */
    static Credentials tokenFile(Path file) {
      return resolved(self -> {
        self.expires = Instant.now().plus(TOKEN_FILE_REREAD);
        return "Bearer " + read(file, "token file").strip();
      }, "token file " + file, Duration.ZERO);
    }

    static Credentials exec(JsonNode exec, Path dir, Map<String, String> env) {
      ExecPlugin plugin = ExecPlugin.of(exec, dir, env);
      return resolved(self -> {
        ExecPlugin.Result result = plugin.run();
        self.expires = result.expires();
        return "Bearer " + result.token();
      }, "exec plugin " + plugin.command(), Duration.ofSeconds(30));
    }

    /** Credentials that {@code resolve} reads, read once now. */
    private static Credentials resolved(Function<Credentials, String> resolve, String source, Duration margin) {
      Credentials credentials = new Credentials(null, resolve, source, margin);
      credentials.header = resolve.apply(credentials);
      return credentials;
    }

    @Nullable String header() {
      return header;
    }

    @Nullable Duration refreshIn() {
      Instant at = expires;
      if (at == null) {
        return null;
      }
      Duration left = Duration.between(Instant.now(), at).minus(margin);
      return left.isNegative() ? Duration.ZERO : left;
    }

    synchronized void refresh() {
      if (resolve == null) {
        return;
      }
      resolvedAt = System.nanoTime();
      try {
        header = resolve.apply(this);
      } catch (RuntimeException e) {
        LOG.warn("could not refresh the API server credentials from the {}: {}", source, e.getMessage());
      }
    }

    synchronized void refreshRejected(@Nullable String rejected) {
      if (!Objects.equals(rejected, header)
          || System.nanoTime() - resolvedAt < Duration.ofMillis(MIN_REFRESH_MILLIS).toNanos()) {
        return;
      }
      LOG.info("the API server refused the credentials from the {} (401); reading them again", source);
      refresh();
    }

    @Override
    public String toString() {
      return fixed != null ? "fixed" : Objects.toString(source, "none");
    }
  }

  /** An {@code exec} credential plugin of a kubeconfig user (client.authentication.k8s.io). */
  private record ExecPlugin(String command, List<String> args, Map<String, String> env, String apiVersion,
      Path dir) {

    record Result(String token, java.time.@Nullable Instant expires) {}

    static ExecPlugin of(JsonNode exec, Path dir, Map<String, String> processEnv) {
      String command = exec.path("command").asString("");
      if (command.isBlank()) {
        throw new IllegalArgumentException("kubeconfig: exec plugin without a command");
      }
      List<String> args = new ArrayList<>();
      exec.path("args").forEach(arg -> args.add(arg.asString()));
      Map<String, String> env = new LinkedHashMap<>();
      exec.path("env").forEach(e -> env.put(e.path("name").asString(""), e.path("value").asString("")));
      // A command given as a relative path (./bin/plugin) is relative to the kubeconfig, as client-go resolves it.
      String resolved = command.contains("/") && !Path.of(command).isAbsolute() ? dir.resolve(command).toString()
          : command;
      return new ExecPlugin(resolved, args, env,
          exec.path("apiVersion").asString("client.authentication.k8s.io/v1"), dir);
    }

    Result run() {
      List<String> commandLine = new ArrayList<>();
      commandLine.add(command);
      commandLine.addAll(args);
      ProcessBuilder builder = new ProcessBuilder(commandLine).directory(dir.toFile())
          .redirectError(ProcessBuilder.Redirect.DISCARD);
      builder.environment().putAll(env);
      ObjectNode info = KubeJson.nodes().objectNode().put("apiVersion", apiVersion).put("kind", "ExecCredential");
      info.putObject("spec").put("interactive", false);
      builder.environment().put("KUBERNETES_EXEC_INFO", KubeJson.text(info));
      try {
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
          process.destroyForcibly();
          throw new IllegalStateException("exec plugin " + command + " failed");
        }
        JsonNode status = KubeJson.mapper().readTree(out).path("status");
        String token = status.path("token").asString("");
        if (token.isEmpty()) {
          throw new IllegalStateException("exec plugin " + command + " returned no token (client certificates from "
              + "exec plugins are not supported)");
        }
        String expiry = status.path("expirationTimestamp").asString("");
        return new Result(token, expiry.isEmpty() ? null : Instant.parse(expiry));
      } catch (IOException e) {
        throw new IllegalStateException("cannot run exec plugin " + command + ": " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while running exec plugin " + command, e);
      }
    }
  }
}
