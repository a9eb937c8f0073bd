package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeConfig;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
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
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Faults of the cluster around the engine, under the {@link FaultLoad} (with fewer parents: the faults are aimed at
 * other objects), each followed by the same {@link Invariants}: the service-account token revoked and rotated while
 * the engine runs; an admission webhook that rejects or times out on child writes, a child CRD deleted and
 * re-created and a controller object deleted while its parents are finalizing, at once; an aggregated API going
 * away and coming back.
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
   * Three faults at once, each aimed at {@value #SIDE} parents of a controller of their own, beside the load (one
   * engine, one window):
   *
   * <ul>
   *   <li>a validating admission webhook on their children's writes, denying half of them and never answering for
   *       the other half (the API server gives up after its {@code timeoutSeconds}): each parent gets a
   *       {@code SyncError} naming the denial or the timeout and keeps its child as it was; all converge once the
   *       webhook is removed;</li>
   *   <li>a child CRD deleted — every child of that type with it — and created again: the parents fail to write their
   *       children ({@code SyncError}), the engine neither crashes nor turns unready (a resource no longer served
   *       holds readiness back no more than one not served yet); once the type is served again the child informer
   *       lists it and every parent gets its child back;</li>
   *   <li>a controller object deleted while half of its parents wait in their finalize hook (it never says
   *       {@code finalized}): the engine retires the controller and removes its finalizer from every object that
   *       still carries it, so those parents go (the garbage collector takes their children) and the others stay
   *       with their children; no parent is left with a finalizer nobody would remove (upstream leaves them:
   *       Metacontroller issue 1062).</li>
   * </ul>
   *
   * <p>The load runs an update wave meanwhile, and its invariants hold — readiness included, past the engine's
   * stale-cache limit since the CRD went.
   */
  @Test
  void aRejectingWebhookADeletedChildCrdAndADeletedControllerAffectOnlyTheirOwnParents() throws Exception {
    List<String> guardedNames = new ArrayList<>();
    for (int i = 0; i < SIDE / 2; i++) {
      guardedNames.add(AdmissionGuard.DENIED + i);
      guardedNames.add(AdmissionGuard.SLOW + i);
    }
    ParentCrd pieces = ParentCrd.create(load.cluster, "Piece");
    AtomicInteger finalizing = new AtomicInteger();
    try (HookServer hooks = HookServer.builder()
            .route("/guarded", request -> oneChild(request, "v1", "ConfigMap", Map.of(AdmissionGuard.LABEL, "yes")))
            .route("/holder", request -> oneChild(request, pieces.apiVersion(), pieces.kind(), Map.of()))
            .route("/fin", request -> oneChild(request, "v1", "ConfigMap", Map.of()))
            .route("/finalize", request -> {
              finalizing.incrementAndGet();
              return ((ObjectNode) oneChild(request, "v1", "ConfigMap", Map.of())).put("finalized", false);
            }).start();
        AdmissionGuard guard = new AdmissionGuard(load.cluster, load.hostedBy + "-guard")) {
      SideParents guarded = SideParents.create(load, "Guarded", guardedNames, null, syncHook(hooks.url("/guarded")));
      SideParents holders = SideParents.create(load, "Holder", numbered("holder-", SIDE), pieces,
          syncHook(hooks.url("/holder")));
      SideParents fins = SideParents.create(load, "Fin", numbered("fin-", SIDE), null,
          syncHook(hooks.url("/fin")) + "\nfinalize: {webhook: {url: \"" + hooks.url("/finalize") + "\"}}");
      String finalizer = "metacontroller.io/compositecontroller-" + fins.controller();
      try (EngineProcess engine = convergedEngine("engine")) {
        for (SideParents side : List.of(guarded, holders, fins)) {
          side.awaitConverged("one");
        }
        await().atMost(CONVERGE).until(() -> fins.parents().values().stream()
            .allMatch(parent -> parent.getMetadata().getFinalizers().contains(finalizer)));
        List<String> deleting = fins.names.subList(0, SIDE / 2);
        List<String> kept = fins.names.subList(SIDE / 2, SIDE);
        Map<String, String> keptChildren = childUids(kept);

        guard.install();
        load.cluster.kubectl("delete", "crd", pieces.plural() + "." + pieces.group(), "--wait=true").orThrow();
        long crdDeleted = System.nanoTime();
        deleting.forEach(name -> fins.crd.in(load.client).withName(name).delete());
        guarded.setValue("two");
        holders.setValue("two");
        load.setValue("two");
        Duration wave = awaitInvariants();

        await().atMost(CONVERGE).untilAsserted(() -> assertThat(guarded.syncErrors().keySet())
            .as("guarded parents with a SyncError").containsExactlyInAnyOrderElementsOf(guardedNames));
        Map<String, String> denials = guarded.syncErrors();
        guardedNames.forEach(name -> assertThat(denials.get(name)).as("the SyncError of %s", name)
            .contains(name.startsWith(AdmissionGuard.DENIED) ? AdmissionGuard.REASON : "failed calling webhook"));
        assertThat(guarded.childValues()).as("guarded children, never written while the webhook refuses")
            .allSatisfy((child, value) -> assertThat(value).isEqualTo("one"));
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(holders.syncErrors().keySet())
            .as("parents whose children's type is gone, with a SyncError")
            .containsExactlyInAnyOrderElementsOf(holders.names));
        await().atMost(CONVERGE).until(() -> finalizing.get() >= deleting.size());
        assertThat(fins.parents()).as("parents finalizing").containsKeys(deleting.toArray(String[]::new))
            .allSatisfy((name, parent) -> assertThat(parent.getMetadata().getDeletionTimestamp() != null)
                .isEqualTo(deleting.contains(name)));

        load.cluster.kubectl("delete", "compositecontroller", fins.controller()).orThrow();
        long retired = System.nanoTime();
        await().atMost(CONVERGE).until(() -> fins.parents().keySet().equals(Set.copyOf(kept)));
        Duration released = Duration.ofNanos(System.nanoTime() - retired);
        assertThat(fins.parents().values()).as("the parents left, without the deleted controller's finalizer")
            .allSatisfy(parent -> assertThat(parent.getMetadata().getFinalizers()).doesNotContain(finalizer));
        assertThat(childUids(kept)).as("the children of the parents left").isEqualTo(keptChildren);

        // Past the engine's stale-cache limit (10 s) since the CRD went: the child informer has failed that long.
        Thread.sleep(Math.max(0, Duration.ofSeconds(12).minusNanos(System.nanoTime() - crdDeleted).toMillis()));
        assertThat(invariants.violations(metricsPort, healthPort)).as("the load, the engine's readiness").isEmpty();

        long removed = System.nanoTime();
        guard.remove();
        load.cluster.createCrd(pieces.definition());
        guarded.awaitConverged("two");
        Duration guardedBack = Duration.ofNanos(System.nanoTime() - removed);
        holders.awaitConverged("two");
        Duration holdersBack = Duration.ofNanos(System.nanoTime() - removed);
        awaitInvariants();
        LOG.info("beside three faults the load's wave converged in {} ms. Webhook: {} denials, {} timeouts, the "
            + "guarded parents converged {} ms after it was removed (e.g. {}). Child CRD: the parents got their "
            + "children back {} ms after it was created again (e.g. {}). Controller deleted: its {} finalizing "
            + "parents were gone {} ms later, the {} others kept their children", wave.toMillis(),
            guard.denied.get(), guard.hung.get(), guardedBack.toMillis(), denials.get(guardedNames.get(1)),
            holdersBack.toMillis(), holders.syncErrors().values().iterator().next(), deleting.size(),
            released.toMillis(), kept.size());
        assertThat(engine.isAlive()).isTrue();
        assertThat(engine.output()).doesNotContain("could not be removed");
      }
    }
  }

  /**
   * An aggregated API going away and coming back (discovery of its group flapping): a MapController maps the objects
   * of a group an aggregated API server serves (a stand-in on loopback behind an APIService). Created while the
   * group is not served, it waits (a {@code CreateError} naming the resource) and starts once the group is served;
   * when the server goes away, the aggregator marks the group stale and serves no resource of it (discovery of the
   * group fails), and the load converges an update wave meanwhile with the engine ready; when the server comes back,
   * the controller's input informer lists again and an object added meanwhile is mapped.
   */
  @Test
  void anAggregatedApiGoingAwayAndComingBackIsFollowedWithoutAffectingTheOthers() throws Exception {
    ParentCrd mappers = ParentCrd.create(load.cluster, "FlapMap");
    AtomicInteger mapped = new AtomicInteger();
    try (AggregatedApi flaps = new AggregatedApi(load.cluster, load.hostedBy);
        HookServer hook = HookServer.builder().route("/map", request -> {
          mapped.incrementAndGet();
          ObjectNode answer = KubeJson.nodes().objectNode();
          answer.putArray("outputs").addObject().put("apiVersion", "v1").put("kind", "ConfigMap")
              .putObject("metadata").put("name", request.path("input").path("metadata").path("name").asString()
                  + "-out");
          return answer;
        }).start()) {
      for (int i = 0; i < 3; i++) {
        flaps.add("flap-" + i, Map.of("flap", "yes"));
      }
      flaps.register(false);
      String controller = load.hostedBy + "-flapmap";
      load.cluster.kubectlWithInput("""
          apiVersion: metacontroller.k8s.io/v1alpha1
          kind: MapController
          metadata:
            name: %s
            labels: {metareactor.dev/hosted-by: %s}
          spec:
            parentResource: {apiVersion: %s, resource: %s}
            inputResources:
            - {apiVersion: %s, resource: %s}
            outputResources:
            - {apiVersion: v1, resource: configmaps, updateStrategy: {method: InPlace}}
            hooks:
              map: {webhook: {url: "%s"}}
          """.formatted(controller, load.hostedBy, mappers.apiVersion(), mappers.plural(), flaps.apiVersion(),
          AggregatedApi.RESOURCE, hook.url("/map")), "apply", "-f", "-").orThrow();
      mappers.in(load.client).resource(mappers.object(load.cluster.namespace(), "flapmap",
          Map.of("selector", Map.of("matchLabels", Map.of("flap", "yes"))))).create();
      try (EngineProcess engine = convergedEngine("engine")) {
        await().atMost(CONVERGE).untilAsserted(() -> assertThat(load.client.v1().events().inNamespace("default")
            .list().getItems()).as("Events about MapController %s", controller).anySatisfy(event -> {
              assertThat(event.getInvolvedObject().getName()).isEqualTo(controller);
              assertThat(event.getMessage()).contains("can't find resource " + AggregatedApi.RESOURCE);
            }));

        long up = System.nanoTime();
        flaps.start();
        await().atMost(CONVERGE).until(() -> outputs().containsAll(List.of("flap-0-out", "flap-1-out",
            "flap-2-out")));
        Duration started = Duration.ofNanos(System.nanoTime() - up);

        long down = System.nanoTime();
        flaps.stop();
        await().atMost(CONVERGE).until(() -> !load.cluster.kubectl("get", "--raw", "/apis/" + flaps.apiVersion())
            .succeeded());
        load.setValue("two");
        awaitInvariants();
        // Past the engine's stale-cache limit (10 s): the input informer has been failing longer than that.
        Thread.sleep(Math.max(0, Duration.ofSeconds(12).minusNanos(System.nanoTime() - down).toMillis()));
        Duration wave = awaitInvariants();

        flaps.add("flap-3", Map.of("flap", "yes"));
        long back = System.nanoTime();
        flaps.start();
        await().atMost(CONVERGE).until(() -> outputs().contains("flap-3-out"));
        Duration resumed = Duration.ofNanos(System.nanoTime() - back);
        LOG.info("an aggregated API: the controller started {} ms after its group was first served; gone, the load's "
            + "wave converged and the engine stayed ready ({} ms after the stale-cache limit); back, an object added "
            + "meanwhile was mapped {} ms later ({} map calls)", started.toMillis(), wave.toMillis(),
            resumed.toMillis(), mapped.get());
        assertThat(engine.isAlive()).isTrue();
        assertThat(invariants.violations(metricsPort, healthPort)).isEmpty();
      }
    }
  }

  /** The names of the ConfigMaps {@code flap-<n>-out} now. */
  private List<String> outputs() {
    return load.client.configMaps().list().getItems().stream().map(configMap -> configMap.getMetadata().getName())
        .filter(name -> name.matches("flap-\\d+-out")).toList();
  }

  /** A controller's {@code hooks} with a sync hook at {@code url} (YAML). */
  private static String syncHook(String url) {
    return "sync: {webhook: {url: \"" + url + "\"}}";
  }

  /** {@code <prefix>0} to {@code <prefix><count - 1>}. */
  private static List<String> numbered(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + i).toList();
  }

  /** The UIDs of the ConfigMap children of these parents ({@code <parent>-c}), by name. */
  private Map<String, String> childUids(List<String> parents) {
    Map<String, String> uids = new TreeMap<>();
    for (ConfigMap child : load.client.configMaps().list().getItems()) {
      String name = child.getMetadata().getName();
      if (name.endsWith("-c") && parents.contains(name.substring(0, name.length() - 2))) {
        uids.put(name, child.getMetadata().getUid());
      }
    }
    return uids;
  }

  /** How many parents a side controller (one a fault is aimed at) has. */
  private static final int SIDE = 20;

  /**
   * A sync hook answering {@code status.value} = the parent's {@code spec.value} and one child {@code <parent>-c}
   * of the given type with {@code labels} and the value in {@code data.value} (a ConfigMap) or {@code spec.value}.
   */
  static JsonNode oneChild(JsonNode request, String apiVersion, String kind, Map<String, String> labels) {
    JsonNode parent = request.path("parent");
    String value = parent.path("spec").path("value").asString("");
    ObjectNode answer = KubeJson.nodes().objectNode();
    answer.putObject("status").put("value", value);
    ObjectNode child = answer.putArray("children").addObject().put("apiVersion", apiVersion).put("kind", kind);
    ObjectNode metadata = child.putObject("metadata").put("name", parent.path("metadata").path("name").asString()
        + "-c");
    labels.forEach(metadata.putObject("labels")::put);
    child.putObject(kind.equals("ConfigMap") ? "data" : "spec").put("value", value);
    return answer;
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
