package dev.metareactor.engine.history;

import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeJson;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Finds the engine that syncs a parent and fetches a page of its ring of recent syncs through the API server, so that
 * {@code metareactor why} needs nothing but a kubeconfig: the holder of the Lease {@code lease} (the leader Lease,
 * {@code --leader-election-id}, or with {@code --sharding} the owning shard's, {@code <id>-shard-<shard>}) names the
 * engine's pod ({@code holderIdentity} is {@code <pod name>_<uuid>}: a pod's host name is its name), and the page is
 * read through the API server's proxy to that pod's metrics port ({@code
 * /api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/debug/syncs/...}; it needs the {@code get} verb on {@code
 * pods/proxy}). An engine that holds no Lease (one replica without {@code --leader-election}) or that does not run in
 * a pod cannot be found this way: {@code --engine URL} then names its metrics address.
 *
 * @param namespace the Lease's namespace (the engine's)
 * @param lease the Lease's name
 * @param port the engine's metrics port ({@code --metrics-address})
 */
public record EngineFinder(String namespace, String lease, int port) {

  public EngineFinder {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(lease, "lease");
  }

  /** The pod named by a Lease's {@code holderIdentity} ({@code <pod>_<uuid>}), or the identity itself. */
  public static String podOf(String holderIdentity) {
    int cut = holderIdentity.lastIndexOf('_');
    return cut > 0 ? holderIdentity.substring(0, cut) : holderIdentity;
  }

  /** The API server's path to {@code page} ({@code debug/syncs/...}) on {@code pod}. */
  public String proxyPath(String pod, String page) {
    return "/api/v1/namespaces/" + namespace + "/pods/" + pod + ":" + port + "/proxy/" + page;
  }

  /**
   * The page, read from the pod that holds the Lease.
   *
   * @return the page's JSON; fails with {@link IllegalStateException} when the Lease has no holder, or with the API
   *     server's error
   */
  public Mono<JsonNode> fetch(KubeApi api, String page) {
    return api.get("/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases/" + lease, "application/json")
        .map(bytes -> KubeJson.mapper().readTree(bytes).path("spec").path("holderIdentity").asString(""))
        .flatMap(holder -> holder.isEmpty()
            ? Mono.error(new IllegalStateException("Lease " + namespace + "/" + lease + " has no holder"))
            : api.get(proxyPath(podOf(holder), page), "application/json"))
        .map(bytes -> KubeJson.mapper().readTree(new String(bytes, StandardCharsets.UTF_8)));
  }
}
