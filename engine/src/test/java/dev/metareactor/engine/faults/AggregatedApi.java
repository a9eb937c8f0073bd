package dev.metareactor.engine.faults;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.testing.k8s.LocalCluster;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An aggregated API of its own on loopback: the group {@code <name>.faults.metareactor.dev}, version {@code v1},
 * one namespaced, read-only resource ({@code flaps}, kind {@code Flap}) whose objects the test adds, served to the
 * API server through an {@code APIService} and an {@code ExternalName} Service naming {@code localhost} (the
 * aggregator then calls {@code https://localhost:<port>}, no cluster network needed). The aggregator would check
 * the certificate against the Service's DNS name ({@code <service>.<namespace>.svc}), which the test certificate
 * for {@code localhost} does not carry: the APIService skips the check. Lists, gets and watches (a
 * watch stays open and quiet until the server stops); {@link #stop} and {@link #start} make the group go away and
 * come back. A watch from a resourceVersion gets the objects added since as {@code ADDED} events, as the API server's
 * watch would.
 */
final class AggregatedApi implements AutoCloseable {

  static final String VERSION = "v1";
  static final String RESOURCE = "flaps";
  static final String KIND = "Flap";

  private final LoopbackHttps server = new LoopbackHttps(this::serve);
  private final LocalCluster cluster;
  private final String name;
  private final String group;
  private final List<ObjectNode> objects = new CopyOnWriteArrayList<>();

  AggregatedApi(LocalCluster cluster, String name) {
    this.cluster = cluster;
    this.name = name;
    this.group = name + ".faults.metareactor.dev";
  }

  String apiVersion() {
    return group + "/" + VERSION;
  }

  /**
   * Registers the group with the aggregator (the Service in the test's namespace, the APIService cluster-wide and
   * deleted after the test). The API server learns the port now, so the server must have one: it is started and
   * left as it is asked to be.
   */
  void register(boolean serving) {
    server.start();
    if (!serving) {
      server.stop();
    }
    cluster.kubectlWithInput("""
        apiVersion: v1
        kind: Service
        metadata: {name: %1$s, namespace: %2$s}
        spec: {type: ExternalName, externalName: localhost, ports: [{name: https, port: %3$d}]}
        ---
        apiVersion: apiregistration.k8s.io/v1
        kind: APIService
        metadata: {name: %4$s.%5$s}
        spec:
          group: %5$s
          version: %4$s
          groupPriorityMinimum: 100
          versionPriority: 10
          insecureSkipTLSVerify: true
          service: {namespace: %2$s, name: %1$s, port: %3$d}
        """.formatted(name, cluster.namespace(), server.port(), VERSION, group), "apply", "-f", "-").orThrow();
  }

  /** Serves again, on the same port. */
  void start() {
    server.start();
  }

  /** Stops serving: the aggregator can no longer reach the group. */
  void stop() {
    server.stop();
  }

  /** Adds an object {@code name} in the test's namespace with {@code labels}. */
  void add(String objectName, Map<String, String> labels) {
    ObjectNode object = KubeJson.nodes().objectNode().put("apiVersion", apiVersion()).put("kind", KIND);
    ObjectNode metadata = object.putObject("metadata").put("name", objectName)
        .put("namespace", cluster.namespace()).put("uid", UUID.randomUUID().toString())
        .put("resourceVersion", Integer.toString(objects.size() + 1))
        .put("creationTimestamp", "2026-01-01T00:00:00Z");
    labels.forEach(metadata.putObject("labels")::put);
    objects.add(object);
  }

  private Publisher<Void> serve(HttpServerRequest request, HttpServerResponse response) {
    String path = request.fullPath();
    String base = "/apis/" + group + "/" + VERSION;
    if (path.equals("/apis")) {
      return LoopbackHttps.json(response, 200, groupList());
    }
    if (path.equals(base)) {
      return LoopbackHttps.json(response, 200, resourceList());
    }
    String collection = base + "/" + RESOURCE;
    String namespaced = base + "/namespaces/" + cluster.namespace() + "/" + RESOURCE;
    if (path.equals(collection) || path.equals(namespaced)) {
      Map<String, List<String>> query = new QueryStringDecoder(request.uri()).parameters();
      if (query.containsKey("watch")) {
        // Objects are only ever added, and only while it does not serve: a watch gets the objects added after its
        // resourceVersion, then stays open and quiet until the server stops.
        long since = Long.parseLong(query.getOrDefault("resourceVersion", List.of("0")).get(0));
        Flux<String> added = Flux.fromIterable(objects)
            .filter(object -> Long.parseLong(object.path("metadata").path("resourceVersion").asString()) > since)
            .map(object -> "{\"type\":\"ADDED\",\"object\":" + object + "}\n");
        return response.status(200).header("Content-Type", "application/json")
            .sendString(added.concatWith(Flux.never())).then();
      }
      return LoopbackHttps.json(response, 200, list());
    }
    if (path.startsWith(namespaced + "/")) {
      String wanted = path.substring(namespaced.length() + 1);
      return objects.stream().filter(object -> object.path("metadata").path("name").asString().equals(wanted))
          .findFirst().map(object -> LoopbackHttps.json(response, 200, object.toString()))
          .orElseGet(() -> notFound(response));
    }
    return notFound(response);
  }

  private static Mono<Void> notFound(HttpServerResponse response) {
    return LoopbackHttps.json(response, 404,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}");
  }

  private String groupList() {
    ObjectNode list = KubeJson.nodes().objectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
    ObjectNode entry = list.putArray("groups").addObject().put("name", group);
    ObjectNode version = KubeJson.nodes().objectNode().put("groupVersion", apiVersion()).put("version", VERSION);
    entry.putArray("versions").add(version);
    entry.set("preferredVersion", version);
    return list.toString();
  }

  private String resourceList() {
    ObjectNode list = KubeJson.nodes().objectNode().put("kind", "APIResourceList").put("apiVersion", "v1")
        .put("groupVersion", apiVersion());
    ObjectNode resource = list.putArray("resources").addObject().put("name", RESOURCE).put("singularName", "flap")
        .put("namespaced", true).put("kind", KIND);
    resource.putArray("verbs").add("get").add("list").add("watch");
    return list.toString();
  }

  private String list() {
    ObjectNode list = KubeJson.nodes().objectNode().put("kind", KIND + "List").put("apiVersion", apiVersion());
    list.putObject("metadata").put("resourceVersion", Integer.toString(objects.size()));
    ArrayNode items = list.putArray("items");
    objects.forEach(items::add);
    return list.toString();
  }

  @Override
  public void close() {
    server.close();
    cluster.kubectl("delete", "apiservice", VERSION + "." + group, "--ignore-not-found");
  }
}
