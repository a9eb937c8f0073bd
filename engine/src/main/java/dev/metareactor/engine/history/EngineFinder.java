package dev.metareactor.engine.history;

import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Finds the engine that syncs a parent and fetches a page of its ring of recent syncs through the API server, so that
 * {@code metareactor why} needs nothing but a kubeconfig: the holder of a Lease (the leader Lease,
 * {@code --leader-election-id}, or with {@code --sharding} the owning shard's, {@code <id>-shard-<shard>}) names the
 * engine's pod ({@code holderIdentity} is {@code <pod name>_<uuid>}: a pod's host name is its name), and the page is
 * read through the API server's proxy to that pod's metrics port ({@code
 * /api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/debug/syncs/...}; it needs the {@code get} verb on {@code
 * pods/proxy}). Unless given, the port is the pod's container port named {@code metrics}, as the project's manifests
 * and chart name it, or {@value #DEFAULT_PORT} when the pod declares none (or cannot be read). An engine that holds no
 * Lease (one replica without {@code --leader-election}) or that does not run in a pod cannot be found this way:
 * {@code --engine URL} then names its metrics address.
 *
 * @param namespace the Lease's namespace (the engine's)
 * @param port the engine's metrics port ({@code --metrics-address}), or 0 for the pod's port named {@code metrics}
 */
public record EngineFinder(String namespace, int port) {

  /** The engine's metrics port when nothing says otherwise: {@code --metrics-address}'s default. */
  public static final int DEFAULT_PORT = 9999;

  public EngineFinder {
    Objects.requireNonNull(namespace, "namespace");
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("the engine's port must be 0 (the pod's port named metrics) or a port, got "
          + port);
    }
  }

  /** The pod named by a Lease's {@code holderIdentity} ({@code <pod>_<uuid>}), or the identity itself. */
  public static String podOf(String holderIdentity) {
    int cut = holderIdentity.lastIndexOf('_');
    return cut > 0 ? holderIdentity.substring(0, cut) : holderIdentity;
  }

  /** The API server's path to {@code page} ({@code debug/syncs/...}) on {@code pod}'s {@code port}. */
  public String proxyPath(String pod, int port, String page) {
    return "/api/v1/namespaces/" + namespace + "/pods/" + pod + ":" + port + "/proxy/" + page;
  }

  /**
   * The page, read from the pod that holds the Lease {@code lease}.
   *
   * @return the page's JSON; fails with {@link IllegalStateException} when the Lease has no holder, or with the API
   *     server's error
   */
  public Mono<JsonNode> fetch(KubeApi api, String lease, String page) {
    return api.get("/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases/" + lease, "application/json")
        .map(bytes -> KubeJson.mapper().readTree(bytes).path("spec").path("holderIdentity").asString(""))
        .flatMap(holder -> holder.isEmpty()
            ? Mono.error(new IllegalStateException("Lease " + namespace + "/" + lease + " has no holder"))
            : Mono.just(podOf(holder)))
        .flatMap(pod -> portOf(api, pod).flatMap(port -> api.get(proxyPath(pod, port, page), "application/json")))
        .map(bytes -> KubeJson.mapper().readTree(new String(bytes, StandardCharsets.UTF_8)));
  }

  /** The port given, else {@code pod}'s container port named {@code metrics}, else {@value #DEFAULT_PORT}. */
  private Mono<Integer> portOf(KubeApi api, String pod) {
    if (port != 0) {
      return Mono.just(port);
    }
    return api.get("/api/v1/namespaces/" + namespace + "/pods/" + pod, "application/json")
        .map(bytes -> metricsPort(KubeJson.mapper().readTree(bytes)))
        .onErrorReturn(DEFAULT_PORT);
  }

  /** A pod's container port named {@code metrics}, or {@value #DEFAULT_PORT}. */
  public static int metricsPort(JsonNode pod) {
    for (JsonNode container : pod.path("spec").path("containers")) {
      for (JsonNode declared : container.path("ports")) {
        if (declared.path("name").asString("").equals("metrics") && declared.path("containerPort").asInt(0) > 0) {
          return declared.path("containerPort").asInt();
        }
      }
    }
    return DEFAULT_PORT;
  }
}
