package dev.metareactor.engine.faults;

import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.server.Engine;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The load every fault runs under, on the real control plane: {@link #parentCount} parents ({@code Load}, namespaced,
 * with a status subresource) of a CompositeController ({@code generateSelector}, {@code InPlace}) with
 * {@value #CHILDREN} ConfigMap children each ({@code <parent>-<i>}, {@code data.value} = the parent's
 * {@code spec.value}); a DecoratorController labelling every parent {@code decorated=<spec.value>}; and a MapController
 * whose one parent maps {@value #INPUTS} input ConfigMaps to an output ConfigMap each ({@code <input>-out}). The hooks
 * are served in the test's JVM; the controllers are labelled for one engine ({@link #hostedBy}).
 */
public final class FaultLoad implements AutoCloseable {

  /** The fault suite's load. */
  public static final int PARENTS = 200;
  /** The writes {@link #createObjects} and {@link #setValue} keep in flight at once. */
  private static final int WRITERS = 32;
  static final int CHILDREN = 3;
  static final int INPUTS = 20;
  static final String INPUT_LABEL = "fault-input";

  final LocalCluster cluster;
  final KubernetesClient client;
  final ParentCrd parents;
  final ParentCrd mappers;
  final HookServer hooks;
  final String hostedBy = "faults-" + UUID.randomUUID().toString().substring(0, 8);
  final int parentCount;
  /** Sync hook calls per parent. */
  final Map<String, AtomicInteger> syncCalls = new ConcurrentHashMap<>();
  /** Calls of any of the three hooks (sync, decorate, map). */
  final AtomicInteger hookCalls = new AtomicInteger();
  /** The hook calls of each replica, by the shard header the engine sends ({@code "null"} without one). */
  final Map<String, AtomicInteger> hookCallsByShard = new ConcurrentHashMap<>();
  /** Every sync hook call: which parent, the shard that called (with {@code --sharding}), when it began and ended. */
  final List<SyncCall> calls = new CopyOnWriteArrayList<>();
  /**
   * Sync hook calls that began while a call for the same parent from another shard (replica) was in flight. (Two
   * calls of one replica may overlap: the hook client retries a call that timed out.)
   */
  final AtomicInteger concurrentCalls = new AtomicInteger();
  /** Each such call: the parent, the shard that called and the shards already in flight. */
  final List<String> concurrentCallsSeen = new CopyOnWriteArrayList<>();
  /** Per parent, the calls in flight by shard. */
  private final Map<String, Map<String, Integer>> inFlight = new ConcurrentHashMap<>();
  /** How long the sync hook takes (0 by default: as fast as it can). */
  private volatile Duration syncTime = Duration.ZERO;
  /** The threads of {@link #forEachParent}. */
  private final ExecutorService writers = Executors.newFixedThreadPool(WRITERS, runnable -> {
    Thread thread = new Thread(runnable, "fault-load-writer");
    thread.setDaemon(true);
    return thread;
  });

  /** One sync hook call; times from {@link System#nanoTime}. */
  record SyncCall(String parent, String shard, long began, long ended) {}

  /** The load of {@code parentCount} parents; its hooks start serving now. */
  public FaultLoad(LocalCluster cluster, int parentCount) {
    this.cluster = cluster;
    this.parentCount = parentCount;
    this.client = cluster.client();
    EngineUnderTest.installCrds(cluster);
    this.parents = ParentCrd.create(cluster, "Load");
    this.mappers = ParentCrd.create(cluster, "Mapper");
    this.hooks = HookServer.builder()
        .routeWithHeaders("/sync", this::timedSync)
        .routeWithHeaders("/decorate", (request, headers) -> Mono.just(decorate(request, headers)))
        .routeWithHeaders("/map", (request, headers) -> Mono.just(map(request, headers)))
        .start();
  }

  /**
   * The three controllers, labelled {@code metareactor.dev/hosted-by=}{@link #hostedBy} (for an engine with that
   * target label selector; one without a selector hosts them too).
   */
  public void createControllers() {
    String controllers = """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %1$s-composite
          labels: {metareactor.dev/hosted-by: %1$s}
        spec:
          generateSelector: true
          parentResource: {apiVersion: %2$s, resource: %3$s}
          childResources:
          - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
          hooks:
            sync: {webhook: {url: "%4$s"}}
        ---
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: DecoratorController
        metadata:
          name: %1$s-decorator
          labels: {metareactor.dev/hosted-by: %1$s}
        spec:
          resources:
          - {apiVersion: %2$s, resource: %3$s}
          hooks:
            sync: {webhook: {url: "%5$s"}}
        ---
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: MapController
        metadata:
          name: %1$s-map
          labels: {metareactor.dev/hosted-by: %1$s}
        spec:
          parentResource: {apiVersion: %6$s, resource: %7$s}
          inputResources:
          - {apiVersion: v1, resource: configmaps}
          outputResources:
          - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
          hooks:
            map: {webhook: {url: "%8$s"}}
        """.formatted(hostedBy, parents.apiVersion(), parents.plural(), hooks.url("/sync"), hooks.url("/decorate"),
        mappers.apiVersion(), mappers.plural(), hooks.url("/map"));
    cluster.kubectlWithInput(controllers, "apply", "-f", "-").orThrow();
  }

  /** The names of the three controllers {@link #createControllers} applies. */
  public List<String> controllerNames() {
    return List.of(hostedBy + "-composite", hostedBy + "-decorator", hostedBy + "-map");
  }

  /**
   * Applies a CompositeController {@code <hostedBy>-<suffix>}, labelled for this load's engine, with {@code spec}
   * (YAML, unindented) as its spec; {@link #close} deletes it with the load's own.
   */
  void applyComposite(String suffix, String spec) {
    applyComposite(suffix, Map.of(), spec);
  }

  /** The same with {@code annotations} on the controller object. */
  void applyComposite(String suffix, Map<String, String> annotations, String spec) {
    StringBuilder annotated = new StringBuilder();
    annotations.forEach((key, value) -> annotated.append(annotated.isEmpty() ? "" : ", ").append(key).append(": \"")
        .append(value).append('"'));
    cluster.kubectlWithInput("""
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %s-%s
          labels: {metareactor.dev/hosted-by: %s}
          annotations: {%s}
        spec:
        %s""".formatted(hostedBy, suffix, hostedBy, annotated, spec.strip().indent(2)), "apply", "-f", "-")
        .orThrow();
  }

  /** The parents with {@code spec.value}, the inputs and the map parent. */
  public void createObjects(String value) {
    forEachParent(i -> parents.in(client)
        .resource(parents.object(cluster.namespace(), parent(i), Map.of("value", value))).create());
    IntStream.range(0, INPUTS).forEach(i -> client.configMaps().resource(new ConfigMapBuilder().withNewMetadata()
        .withName(input(i)).withLabels(Map.of(INPUT_LABEL, "yes")).endMetadata().build()).create());
    mappers.in(client).resource(mappers.object(cluster.namespace(), "mapper",
        Map.of("selector", Map.of("matchLabels", Map.of(INPUT_LABEL, "yes"))))).create();
  }

  /** Sets every parent's {@code spec.value} (a merge patch without resourceVersion, as kubectl patch). */
  void setValue(String value) {
    forEachParent(i -> parents.in(client).withName(parent(i))
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\": {\"value\": \"" + value + "\"}}"));
  }

  /**
   * Runs {@code write} for every parent's index, {@value #WRITERS} at a time, and returns once all are done; fails
   * with the first write that failed. A parallel stream would keep only as many in flight as the machine has cores
   * (two in CI), which made a wave of 200 patches take 8 to 12 s on a busy machine, each waiting for the API server's
   * answer to the one before.
   */
  private void forEachParent(IntConsumer write) {
    try {
      CompletableFuture.allOf(IntStream.range(0, parentCount)
          .mapToObj(i -> CompletableFuture.runAsync(() -> write.accept(i), writers))
          .toArray(CompletableFuture<?>[]::new)).join();
    } catch (CompletionException e) {
      throw e.getCause() instanceof RuntimeException failed ? failed : e;
    }
  }
  /** The API group of the load's parents (for RBAC rules). */
  public String parentGroup() {
    return parents.group();
  }

  /** The API group of the map parent. */
  public String mapperGroup() {
    return mappers.group();
  }

  List<GenericKubernetesResource> parentList() {
    return parents.in(client).inNamespace(cluster.namespace()).list().getItems();
  }

  static String parent(int i) {
    return "load-" + i;
  }

  static String input(int i) {
    return "input-" + i;
  }

  int totalSyncCalls() {
    return syncCalls.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  /**
   * Makes the sync hook take {@code time} per call: long enough that two replicas calling it for one parent at once
   * would be seen in flight together.
   */
  void syncTakes(Duration time) {
    this.syncTime = time;
  }

  /** The sync hook, recording who called it and when, and whether it was already running for the parent. */
  private Mono<JsonNode> timedSync(JsonNode request, HttpHeaders headers) {
    String parent = request.path("parent").path("metadata").path("name").asString();
    String shard = called(headers);
    long began = System.nanoTime();
    Map<String, Integer> running = inFlight.computeIfAbsent(parent, p -> new ConcurrentHashMap<>());
    synchronized (running) {
      if (running.keySet().stream().anyMatch(other -> !other.equals(shard))) {
        concurrentCalls.incrementAndGet();
        concurrentCallsSeen.add(parent + " by " + shard + " while " + running.keySet() + " in flight");
      }
      running.merge(shard, 1, Integer::sum);
    }
    Mono<JsonNode> answer = syncTime.isZero() ? Mono.fromSupplier(() -> sync(request))
        : Mono.delay(syncTime).map(tick -> sync(request));
    return answer.doFinally(signal -> {
      synchronized (running) {
        running.computeIfPresent(shard, (key, count) -> count == 1 ? null : count - 1);
      }
      calls.add(new SyncCall(parent, shard, began, System.nanoTime()));
    });
  }

  private JsonNode sync(JsonNode request) {
    JsonNode parent = request.path("parent");
    String name = parent.path("metadata").path("name").asString();
    syncCalls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
    String value = parent.path("spec").path("value").asString("");
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("status").put("value", value);
    ArrayNode children = answer.putArray("children");
    for (int i = 0; i < CHILDREN; i++) {
      ObjectNode child = children.addObject().put("apiVersion", "v1").put("kind", "ConfigMap");
      child.putObject("metadata").put("name", name + "-" + i);
      child.putObject("data").put("value", value);
    }
    return answer;
  }

  /** Counts a hook call, and returns the shard that made it. */
  private String called(HttpHeaders headers) {
    String shard = String.valueOf(headers.get(Engine.SHARD_HEADER));
    hookCalls.incrementAndGet();
    hookCallsByShard.computeIfAbsent(shard, s -> new AtomicInteger()).incrementAndGet();
    return shard;
  }

  private JsonNode decorate(JsonNode request, HttpHeaders headers) {
    called(headers);
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("labels").put("decorated", request.path("object").path("spec").path("value").asString(""));
    return answer;
  }

  private JsonNode map(JsonNode request, HttpHeaders headers) {
    called(headers);
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putArray("outputs").addObject().put("apiVersion", "v1").put("kind", "ConfigMap")
        .putObject("metadata").put("name", request.path("input").path("metadata").path("name").asString() + "-out");
    return answer;
  }

  /**
   * Stops serving the hooks, deletes the controllers, and deletes the load's ConfigMaps (children, inputs, outputs)
   * itself before the test's CRDs go: left to the garbage collector, thousands of children whose owners' type no
   * longer exists make it retry each ("unable to get REST mapping") until the namespace is gone, and the objects of
   * the tests after this one wait behind them for minutes.
   */
  @Override
  public void close() {
    writers.shutdownNow();
    hooks.close();
    cluster.kubectl("delete", "compositecontrollers,decoratorcontrollers,mapcontrollers", "-l",
        "metareactor.dev/hosted-by=" + hostedBy, "--ignore-not-found");
    cluster.kubectl("delete", "--raw", "/api/v1/namespaces/" + cluster.namespace() + "/configmaps");
  }
}
