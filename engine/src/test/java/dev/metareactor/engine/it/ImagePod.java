package dev.metareactor.engine.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LoopbackPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import tools.jackson.databind.JsonNode;

/**
 * A pod of a StatefulSet applied to the local control plane, run from the engine's image ({@link ContainerImage}) as
 * a kubelet would run its first container, with bubblewrap: in user, mount, PID, IPC and UTS namespaces of its own;
 * the entry point as PID 1 (so SIGTERM reaches it as the kubelet sends it); no capabilities and no new privileges;
 * the pod's user (its {@code securityContext}, else the image's {@code User}), and when the test runs as root, that
 * user on the host too (setpriv), so the container can read and write only what that user may; the container's
 * {@code command} and {@code args} over the image's {@code Entrypoint} and {@code Cmd} as Kubernetes combines them;
 * the image's {@code Env}, the kubelet's {@code KUBERNETES_SERVICE_HOST}/{@code _PORT} (the API server's loopback
 * address, which its certificate names) and the container's {@code env}; the root filesystem read-only when
 * {@code readOnlyRootFilesystem} says so; each {@code emptyDir} volume a directory of the pod (kept across restarts of
 * the container, as the kubelet keeps it); a token of the pod's ServiceAccount ({@code kubectl create token}), the
 * cluster's CA and the namespace at {@code /var/run/secrets/kubernetes.io/serviceaccount}; and the kubelet's
 * {@code /etc/hosts}, {@code /etc/hostname} (the pod's name) and {@code /etc/resolv.conf}.
 *
 * <p>What differs from a node, and why: the pod shares the host's network namespace (a pod has its own; here the API
 * server and the test's hooks are on the host's loopback, and the pod's ports are the host's); resource limits and the
 * seccomp profile are not applied (no delegated cgroup here); {@code fsGroup} is not (a user namespace of one user
 * has one group). A writable root filesystem is emulated: the image's files stay read-only (they belong to root, so
 * the pod's user could not change them anyway) and every directory of the image that user could write (such as
 * {@code /tmp}) is a fresh empty one, as a container's own writable layer starts empty.
 */
public final class ImagePod implements AutoCloseable {

  /** Where the kubelet mounts the service account. */
  public static final String SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";

  /** The port of a JVM debugger's {@code -agentlib:jdwp=...,address=[host:]port}. */
  private static final Pattern DEBUGGER_ADDRESS = Pattern.compile("jdwp=\\S*address=(?:\\S*:)?(\\d+)");

  private final LocalCluster cluster;
  private final ContainerImage image;
  private final String namespace;
  private final String name;
  private final JsonNode podSpec;
  private final JsonNode container;
  private final Path dir;

  private ImagePod(LocalCluster cluster, ContainerImage image, String namespace, String name, JsonNode podSpec) {
    this.cluster = cluster;
    this.image = image;
    this.namespace = namespace;
    this.name = name;
    this.podSpec = podSpec;
    this.container = podSpec.path("containers").get(0);
    try {
      // Its volumes and projected files, in a directory the container's user may enter (bubblewrap mounts them as
      // that user).
      this.dir = Files.createTempDirectory("metareactor-pod-",
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The first pod ({@code <name>-0}) of StatefulSet {@code statefulSet} in {@code namespace}, as applied. */
  public static ImagePod ofStatefulSet(LocalCluster cluster, ContainerImage image, String namespace,
      String statefulSet) {
    JsonNode object = KubeJson.mapper().readTree(cluster.kubectl("get", "statefulset", statefulSet, "--namespace",
        namespace, "-o", "json").orThrow());
    return new ImagePod(cluster, image, namespace, statefulSet + "-0", object.path("spec").path("template")
        .path("spec"));
  }

  /** Removes the pod's volumes and files (its containers must have ended). */
  @Override
  public void close() {
    try {
      new ProcessBuilder("rm", "-rf", dir.toString()).inheritIO().start().waitFor(1, TimeUnit.MINUTES);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The pod's spec, as the StatefulSet's template describes it. */
  public JsonNode spec() {
    return podSpec;
  }

  /** The container the pod runs (its first), as the StatefulSet describes it. */
  public JsonNode container() {
    return container;
  }

  /**
   * The port of {@code /healthz} and {@code /readyz}: the container's readiness probe's (a number, or the name of one
   * of its ports), else its {@code --health-probe-bind-address}, else the engine's default, 8081.
   */
  public int probePort() {
    JsonNode port = container.path("readinessProbe").path("httpGet").path("port");
    if (port.isNumber()) {
      return port.asInt();
    }
    for (JsonNode named : container.path("ports")) {
      if (!port.isMissingNode() && named.path("name").asString().equals(port.asString())) {
        return named.path("containerPort").asInt();
      }
    }
    assertThat(port.isMissingNode()).as("the readiness probe's port %s is one of the container's", port).isTrue();
    return flagPort("health-probe-bind-address", 8081);
  }

  /** The port of {@code /metrics}: the container's {@code --metrics-address}, else the engine's default, 9999. */
  public int metricsPort() {
    return flagPort("metrics-address", 9999);
  }

  /** The port of the address flag {@code name} among the container's arguments, else {@code otherwise}. */
  private int flagPort(String name, int otherwise) {
    List<String> args = arguments();
    for (int i = 0; i < args.size(); i++) {
      String flag = args.get(i).replaceFirst("^--?", "");
      String address = flag.startsWith(name + "=") ? flag.substring(name.length() + 1)
          : flag.equals(name) && i + 1 < args.size() ? args.get(i + 1) : null;
      if (address != null) {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
      }
    }
    return otherwise;
  }

  /** The container's {@code terminationGracePeriodSeconds} (30 when the pod does not say). */
  public int terminationGracePeriodSeconds() {
    return podSpec.path("terminationGracePeriodSeconds").asInt(30);
  }

  /**
   * Stops a container as the kubelet stops a pod: SIGTERM to PID 1, then at most the grace period for it to end.
   *
   * @return its exit code, or {@code null} if it still ran when the grace period was over
   */
  public Integer stop(Container running) throws InterruptedException {
    running.terminate();
    return running.awaitExit(terminationGracePeriodSeconds());
  }

  /** The directory of an {@code emptyDir} volume of the pod (on the host). */
  public Path emptyDir(String volume) {
    return dir.resolve("volumes").resolve(volume);
  }

  /**
   * Starts a container of the pod (the pod's volumes are the same for each: starting another after one ended is a
   * restart of the container); its output goes to {@code log}.
   */
  public Container start(Path log) {
    for (int port : hostPorts()) {
      LoopbackPorts.awaitFree(port, Duration.ofMinutes(2));
    }
    try {
      return new Container(startProcess(log), log);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The ports the container will listen on in the host's network: its declared ports, its probes and metrics, and a
   * JVM debugger's ({@code address=*:40000} in its environment). A port in the kernel's ephemeral range, as upstream's
   * Delve port is, may be the local port of another process's connection for a while.
   */
  private Set<Integer> hostPorts() {
    Set<Integer> ports = new TreeSet<>(List.of(probePort(), metricsPort()));
    container.path("ports").forEach(port -> ports.add(port.path("containerPort").asInt()));
    for (JsonNode variable : container.path("env")) {
      Matcher debugger = DEBUGGER_ADDRESS.matcher(variable.path("value").asString(""));
      if (debugger.find()) {
        ports.add(Integer.parseInt(debugger.group(1)));
      }
    }
    return ports;
  }

  /** The container's {@code command} and {@code args} over the image's {@code Entrypoint} and {@code Cmd}. */
  private List<String> commandLine() {
    List<String> line = new ArrayList<>(container.has("command") ? strings(container.path("command"))
        : image.entrypoint());
    line.addAll(arguments());
    return line;
  }

  private List<String> arguments() {
    return container.has("args") ? strings(container.path("args"))
        : container.has("command") ? List.of() : image.cmd();
  }

  private Process startProcess(Path log) throws IOException {
    JsonNode security = container.path("securityContext");
    JsonNode podSecurity = podSpec.path("securityContext");
    String[] imageUser = image.user().isEmpty() ? new String[] {"0"} : image.user().split(":");
    long uid = security.path("runAsUser").asLong(podSecurity.path("runAsUser").asLong(Long.parseLong(imageUser[0])));
    long gid = security.path("runAsGroup").asLong(podSecurity.path("runAsGroup")
        .asLong(imageUser.length > 1 ? Long.parseLong(imageUser[1]) : uid));
    if (security.path("runAsNonRoot").asBoolean(podSecurity.path("runAsNonRoot").asBoolean(false))) {
      assertThat(uid).as("runAsNonRoot: the kubelet refuses to start a container that runs as root").isNotZero();
    }
    boolean readOnlyRoot = security.path("readOnlyRootFilesystem").asBoolean(false);

    List<String> command = new ArrayList<>();
    if (ContainerImage.isRoot()) {
      command.addAll(List.of("setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups"));
    }
    command.addAll(List.of(image.bwrap().toString(), "--unshare-user", "--uid", Long.toString(uid), "--gid",
        Long.toString(gid), "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", name, "--as-pid-1",
        "--die-with-parent", "--new-session", "--ro-bind", image.rootfs().toString(), "/", "--proc", "/proc",
        "--dev", "/dev"));
    List<String> mounted = new ArrayList<>();
    for (JsonNode mount : container.path("volumeMounts")) {
      String path = mount.path("mountPath").asString();
      Path source = volume(mount.path("name").asString());
      command.addAll(List.of(mount.path("readOnly").asBoolean(false) ? "--ro-bind" : "--bind", source.toString(),
          target(path, true)));
      mounted.add(path);
    }
    if (!readOnlyRoot) {
      for (Map.Entry<String, String> writable : writableDirectories(uid, gid).entrySet()) {
        if (mounted.stream().noneMatch(path -> writable.getKey().equals(path))) {
          command.addAll(List.of("--perms", writable.getValue(), "--tmpfs", writable.getKey()));
        }
      }
    }
    if (podSpec.path("automountServiceAccountToken").asBoolean(true)) {
      command.addAll(List.of("--ro-bind", serviceAccount().toString(), target(SERVICE_ACCOUNT, true)));
    }
    for (Map.Entry<String, String> file : kubeletFiles().entrySet()) {
      command.addAll(List.of("--ro-bind", file.getValue(), target(file.getKey(), false)));
    }
    command.add("--clearenv");
    for (Map.Entry<String, String> variable : environment(uid).entrySet()) {
      command.addAll(List.of("--setenv", variable.getKey(), variable.getValue()));
    }
    command.addAll(List.of("--chdir", container.path("workingDir").asString(image.workingDir()), "--"));
    command.addAll(commandLine());

    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().put("LD_LIBRARY_PATH", image.bwrapLibraries().toString());
    return builder.start();
  }

  /**
   * The environment the kubelet gives the container: the image's, the API server's service, the container's own.
   * (The runtime sets {@code HOME} from the image's {@code /etc/passwd} when neither does.)
   */
  private Map<String, String> environment(long uid) {
    Map<String, String> env = new LinkedHashMap<>(image.env());
    env.put("HOSTNAME", name);
    URI server = URI.create(cluster.client().getConfiguration().getMasterUrl());
    env.put("KUBERNETES_SERVICE_HOST", server.getHost());
    env.put("KUBERNETES_SERVICE_PORT", Integer.toString(server.getPort()));
    env.put("KUBERNETES_SERVICE_PORT_HTTPS", Integer.toString(server.getPort()));
    for (JsonNode variable : container.path("env")) {
      assertThat(variable.has("valueFrom")).as("env %s: valueFrom is not supported here", variable).isFalse();
      env.put(variable.path("name").asString(), variable.path("value").asString(""));
    }
    env.putIfAbsent("HOME", image.home(uid));
    return env;
  }

  /** The host directory of a volume the container mounts; only {@code emptyDir} volumes are supported. */
  private Path volume(String volumeName) throws IOException {
    for (JsonNode volume : podSpec.path("volumes")) {
      if (volume.path("name").asString().equals(volumeName)) {
        assertThat(volume.has("emptyDir")).as("volume %s: only emptyDir volumes are supported here", volume).isTrue();
        Path path = emptyDir(volumeName);
        if (!Files.isDirectory(path)) {
          Files.createDirectories(path);
          // As the kubelet makes an emptyDir: anyone may write it.
          Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxrwxrwx"));
        }
        return path;
      }
    }
    throw new AssertionError("no volume " + volumeName + " in the pod");
  }

  /** A token of the pod's ServiceAccount, the cluster's CA and the pod's namespace, as the kubelet projects them. */
  private Path serviceAccount() throws IOException {
    Path serviceAccount = dir.resolve("serviceaccount");
    Files.createDirectories(serviceAccount);
    String account = podSpec.path("serviceAccountName").asString("default");
    String token = cluster.kubectl("create", "token", account, "--namespace", namespace, "--duration=1h").orThrow();
    Files.writeString(serviceAccount.resolve("token"), token.strip());
    Files.write(serviceAccount.resolve("ca.crt"),
        Base64.getDecoder().decode(cluster.client().getConfiguration().getCaCertData()));
    Files.writeString(serviceAccount.resolve("namespace"), namespace);
    readableByAll(serviceAccount);
    return serviceAccount;
  }

  /** {@code /etc/hosts}, {@code /etc/hostname} and {@code /etc/resolv.conf} as the kubelet writes them. */
  private Map<String, String> kubeletFiles() throws IOException {
    Path etc = dir.resolve("etc");
    Files.createDirectories(etc);
    Files.writeString(etc.resolve("hosts"), """
        127.0.0.1\tlocalhost
        ::1\tlocalhost ip6-localhost ip6-loopback
        127.0.0.1\t%s
        """.formatted(name));
    Files.writeString(etc.resolve("hostname"), name + "\n");
    Files.writeString(etc.resolve("resolv.conf"), """
        search %s.svc.cluster.local svc.cluster.local cluster.local
        nameserver 10.96.0.10
        options ndots:5
        """.formatted(namespace));
    readableByAll(etc);
    Map<String, String> files = new LinkedHashMap<>();
    for (String file : List.of("hosts", "hostname", "resolv.conf")) {
      files.put("/etc/" + file, etc.resolve(file).toString());
    }
    return files;
  }

  /**
   * The directories of the image {@code uid}/{@code gid} could write (with their modes), the topmost of each
   * subtree: what a container's writable layer would let the process change.
   */
  private Map<String, String> writableDirectories(long uid, long gid) throws IOException {
    Map<String, String> writable = new LinkedHashMap<>();
    Path rootfs = image.rootfs();
    try (Stream<Path> paths = Files.walk(rootfs)) {
      for (Path path : paths.filter(path -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)).sorted().toList()) {
        String inImage = "/" + rootfs.relativize(path);
        if (inImage.equals("/") || inImage.startsWith("/proc") || inImage.startsWith("/dev")
            || writable.keySet().stream().anyMatch(parent -> inImage.startsWith(parent + "/"))) {
          continue;
        }
        PosixFileAttributes attributes = Files.readAttributes(path, PosixFileAttributes.class,
            LinkOption.NOFOLLOW_LINKS);
        Set<PosixFilePermission> permissions = attributes.permissions();
        long owner = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        long group = (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        boolean canWrite = owner == uid && permissions.contains(PosixFilePermission.OWNER_WRITE)
            || group == gid && permissions.contains(PosixFilePermission.GROUP_WRITE)
            || permissions.contains(PosixFilePermission.OTHERS_WRITE);
        if (canWrite) {
          int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
          writable.put(inImage, String.format("%04o", mode));
        }
      }
    }
    return writable;
  }

  /**
   * {@code path} in the container with the image's symbolic links followed inside the image (as a runtime resolves a
   * mount's destination: {@code /var/run} is a link to {@code /run}); created in the image when missing (a directory,
   * or an empty file), as the runtime creates the mount point.
   */
  private String target(String path, boolean directory) throws IOException {
    Path rootfs = image.rootfs();
    List<String> parts = new ArrayList<>(List.of(path.replaceFirst("^/+", "").split("/")));
    List<String> resolved = new ArrayList<>();
    for (int hops = 0; !parts.isEmpty(); ) {
      String part = parts.remove(0);
      Path current = rootfs.resolve(String.join("/", resolved)).resolve(part);
      if (Files.isSymbolicLink(current)) {
        assertThat(++hops).as("symbolic links resolving %s", path).isLessThan(40);
        String link = Files.readSymbolicLink(current).toString();
        if (link.startsWith("/")) {
          resolved.clear();
        }
        parts.addAll(0, List.of(link.replaceFirst("^/+", "").split("/")));
      } else if (part.equals("..")) {
        if (!resolved.isEmpty()) {
          resolved.remove(resolved.size() - 1);
        }
      } else if (!part.isEmpty() && !part.equals(".")) {
        resolved.add(part);
      }
    }
    Path inRootfs = rootfs.resolve(String.join("/", resolved));
    if (!Files.exists(inRootfs)) {
      if (directory) {
        Files.createDirectories(inRootfs);
      } else {
        Files.createDirectories(inRootfs.getParent());
        Files.createFile(inRootfs);
      }
    }
    return "/" + String.join("/", resolved);
  }

  private static void readableByAll(Path directory) throws IOException {
    Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
    try (Stream<Path> files = Files.list(directory)) {
      for (Path file : files.toList()) {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
      }
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> strings = new ArrayList<>();
    array.forEach(node -> strings.add(node.asString()));
    return strings;
  }

  /** A running container of the pod: its entry point is PID 1 of its own PID namespace. */
  public static final class Container implements AutoCloseable {

    private final Process sandbox;
    private final Path log;

    private Container(Process sandbox, Path log) {
      this.sandbox = sandbox;
      this.log = log;
    }

    /** The host's PID of the container's PID 1 (the entry point, which the launcher replaced by the JVM). */
    public long pid() {
      return Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> sandbox.toHandle().children().findFirst(),
          child -> child.isPresent()).orElseThrow().pid();
    }

    /**
     * Waits up to {@link EngineUnderTest#TIMEOUT} until {@code condition} holds of what {@code supplier} gives (polled
     * every second, exceptions counting as not yet) while the container runs; a failure says {@code what} was awaited
     * and carries the container's output.
     */
    public <T> T await(String what, Callable<T> supplier, Predicate<? super T> condition) {
      try {
        return Awaitility.await(what).atMost(EngineUnderTest.TIMEOUT).pollInterval(Duration.ofSeconds(1))
            .ignoreExceptions().failFast("the container ended", () -> !sandbox.isAlive())
            .until(supplier, condition::test);
      } catch (RuntimeException e) {
        throw new AssertionError(e.getMessage() + "; the container's output:\n" + output(), e);
      }
    }

    /** Sends SIGTERM to PID 1, as the kubelet stops a container. */
    public void terminate() {
      EngineProcess.signal(pid(), "TERM");
    }

    /** Waits up to {@code seconds} for the container to end; its exit code, or {@code null} while it runs. */
    public Integer awaitExit(long seconds) throws InterruptedException {
      return sandbox.waitFor(seconds, TimeUnit.SECONDS) ? sandbox.exitValue() : null;
    }

    public boolean isAlive() {
      return sandbox.isAlive();
    }

    /** What the container wrote so far (stdout and stderr). */
    public String output() {
      try {
        return Files.readString(log, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The host's (real) uid of PID 1, from {@code /proc/<pid>/status}. */
    public long hostUid() {
      try {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"),
            StandardCharsets.UTF_8)) {
          if (line.startsWith("Uid:")) {
            return Long.parseLong(line.split("\\s+")[1]);
          }
        }
        throw new AssertionError("no Uid line in /proc/" + pid() + "/status");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** Kills the container if it still runs (bubblewrap's end takes PID 1 with it). */
    @Override
    public void close() {
      sandbox.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
      sandbox.destroyForcibly();
    }
  }
}
