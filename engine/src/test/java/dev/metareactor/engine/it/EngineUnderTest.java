package dev.metareactor.engine.it;

import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.cli.EngineCommand;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.server.Engine;
import dev.metareactor.http.metrics.MetricCatalogue;
import dev.metareactor.testing.k8s.LocalCluster;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.micrometer.core.instrument.Counter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import tools.jackson.databind.JsonNode;

/**
 * A Metareactor engine running in the test JVM against the local control plane, as {@code java -jar} would run
 * it (the same flag parsing), with a fast discovery interval and ephemeral management ports.
 *
 * <p>Isolation: it starts with {@code --target-label-selector=metareactor.dev/hosted-by=<id>}, and
 * {@link #createController} labels controller objects with that id, so each test's engine hosts only its own
 * controllers even though controller objects are cluster-scoped. {@link #startHostingAll} is the exception.
 */
public final class EngineUnderTest implements AutoCloseable {

  /** The label that ties a controller object to one engine under test. */
  public static final String HOSTED_BY = "metareactor.dev/hosted-by";
  public static final Duration TIMEOUT = Duration.ofSeconds(60);
  public static final ResourceDefinitionContext COMPOSITE_CONTROLLERS = new ResourceDefinitionContext.Builder()
      .withGroup("metacontroller.k8s.io").withVersion("v1alpha1").withPlural("compositecontrollers")
      .withKind("CompositeController").withNamespaced(false).build();
  public static final ResourceDefinitionContext DECORATOR_CONTROLLERS = new ResourceDefinitionContext.Builder()
      .withGroup("metacontroller.k8s.io").withVersion("v1alpha1").withPlural("decoratorcontrollers")
      .withKind("DecoratorController").withNamespaced(false).build();
  public static final ResourceDefinitionContext MAP_CONTROLLERS = new ResourceDefinitionContext.Builder()
      .withGroup("metacontroller.k8s.io").withVersion("v1alpha1").withPlural("mapcontrollers")
      .withKind("MapController").withNamespaced(false).build();

  private static boolean crdsInstalled;

  private final LocalCluster cluster;
  private final String id;
  private final Engine engine;
  private final HttpClient http = HttpClient.newHttpClient();

  private EngineUnderTest(LocalCluster cluster, String id, Engine engine) {
    this.cluster = cluster;
    this.id = id;
    this.engine = engine;
  }

  /** Installs Metacontroller's CRDs (once per JVM) and starts an engine with the default flags plus {@code flags}. */
  public static EngineUnderTest start(LocalCluster cluster, String... flags) {
    String id = UUID.randomUUID().toString().substring(0, 12);
    return start(cluster, id, List.of("--target-label-selector=" + HOSTED_BY + "=" + id), flags);
  }

  /**
   * A new engine hosting the same controllers as this one (the same {@link #HOSTED_BY} id), with the default flags
   * plus {@code flags}: for a test of what an engine finds that another one left (close this one first).
   */
  public EngineUnderTest successor(String... flags) {
    return start(cluster, id, List.of("--target-label-selector=" + HOSTED_BY + "=" + id), flags);
  }

  /**
   * Like {@link #start}, but without a target label selector: the engine hosts every controller object in the
   * cluster, as a user's engine does. For tests whose controllers come from elsewhere (kubectl, an example's
   * script) and so carry no {@link #HOSTED_BY} label. Controllers other tests leave behind are hosted too, so run
   * no two such engines at once.
   */
  public static EngineUnderTest startHostingAll(LocalCluster cluster, String... flags) {
    return start(cluster, "all", List.of(), flags);
  }

  private static EngineUnderTest start(LocalCluster cluster, String id, List<String> selector, String... flags) {
    installCrds(cluster);
    List<String> args = new ArrayList<>(List.of(
        "--kubeconfig=" + cluster.kubeconfig(),
        "--metrics-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
        "--discovery-interval=500ms",
        "--shutdown-timeout=10s"));
    args.addAll(selector);
    args.addAll(List.of(flags));
    return new EngineUnderTest(cluster, id, Engine.start(EngineCommand.parse(args.toArray(String[]::new))));
  }

  /** Installs Metacontroller's CRDs from manifests/production (once per JVM; they stay for later tests). */
  public static synchronized void installCrds(LocalCluster cluster) {
    if (crdsInstalled) {
      return;
    }
    applyCrds(cluster);
  }

  /** Installs them again, for a test that deleted them (with {@code kubectl delete -k manifests/production}). */
  public static synchronized void reinstallCrds(LocalCluster cluster) {
    applyCrds(cluster);
  }

  private static void applyCrds(LocalCluster cluster) {
    Path crds = cluster.controlPlane().repoRoot().resolve("manifests/production/metacontroller-crds-v1.yaml");
    // Applied until all are Established: one still being deleted takes the apply and then goes.
    await().atMost(TIMEOUT).ignoreExceptions().until(() -> {
      cluster.kubectl("apply", "-f", crds.toString()).orThrow();
      return cluster.kubectl("wait", "--for=condition=Established", "--timeout=10s",
          "crd/compositecontrollers.metacontroller.k8s.io", "crd/decoratorcontrollers.metacontroller.k8s.io",
          "crd/mapcontrollers.metacontroller.k8s.io", "crd/controllerrevisions.metacontroller.k8s.io").succeeded();
    });
    crdsInstalled = true;
  }

  public Engine engine() {
    return engine;
  }

  /**
   * Creates a controller object (a CompositeController, DecoratorController or MapController, by its
   * {@code kind}) from YAML, labelled for this engine, deleted after the test.
   *
   * @return the created object
   */
  public GenericKubernetesResource createController(String yaml) {
    KubernetesClient client = cluster.client();
    GenericKubernetesResource controller =
        client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
    Map<String, String> labels = controller.getMetadata().getLabels() == null
        ? new HashMap<>() : new HashMap<>(controller.getMetadata().getLabels());
    labels.put(HOSTED_BY, id);
    controller.getMetadata().setLabels(labels);
    GenericKubernetesResource created = client.genericKubernetesResources(contextOf(controller.getKind()))
        .resource(controller).create();
    return cluster.deleteAfterTest(created);
  }

  private static ResourceDefinitionContext contextOf(String kind) {
    return switch (kind) {
      case "DecoratorController" -> DECORATOR_CONTROLLERS;
      case "MapController" -> MAP_CONTROLLERS;
      default -> COMPOSITE_CONTROLLERS;
    };
  }

  /** Deletes a CompositeController now. */
  public void deleteController(String name) {
    deleteController("CompositeController", name);
  }

  /** Deletes a controller object of {@code kind} now. */
  public void deleteController(String kind, String name) {
    cluster.client().genericKubernetesResources(contextOf(kind)).withName(name).delete();
  }

  /** Waits until the engine reports ready. */
  public void awaitReady() {
    await().atMost(TIMEOUT).until(engine::isReady);
  }

  /** Total API requests the engine made (informer lists and watches excluded), over every verb and resource. */
  public double apiRequests() {
    return apiRequests(counter -> true);
  }

  /** API requests whose counter matches (by its verb, resource and code tags). */
  public double apiRequests(Predicate<Counter> which) {
    return engine.meters().find(MetricCatalogue.API_REQUESTS.name()).counters().stream().filter(which)
        .mapToDouble(Counter::count).sum();
  }

  /**
   * The syncs of {@code controller} whose answer the engine compared with its shadow hook's, with this result
   * ({@code same}, {@code differs}, {@code error}, {@code skipped}).
   */
  public double shadowSyncs(String controller, String result) {
    return engine.meters().find(MetricCatalogue.SHADOW_SYNCS.name()).tag("controller", controller)
        .tag("result", result).counters().stream().mapToDouble(Counter::count).sum();
  }

  /** The Events about an object ({@code namespace} {@code default} for cluster-scoped objects). */
  public List<Event> eventsAbout(String namespace, String name) {
    return cluster.client().v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(event -> name.equals(event.getInvolvedObject().getName()))
        .toList();
  }

  /** Whether an Event with this reason and a message containing {@code text} was recorded about the object. */
  public boolean hasEvent(String namespace, String name, String reason, String text) {
    return eventsAbout(namespace, name).stream()
        .anyMatch(event -> reason.equals(event.getReason()) && event.getMessage().contains(text));
  }

  /**
   * The syncs the engine keeps for a parent ({@code /debug/syncs}, oldest first), none when it keeps none.
   *
   * @param kind the controller's kind in lower case ({@code compositecontroller}, ...)
   */
  public List<JsonNode> keptSyncs(String kind, String controller, String namespace, String parent) {
    HttpResponse<String> page = get(true, "/debug/syncs/" + kind + "/" + controller + "/" + namespace + "/" + parent);
    List<JsonNode> syncs = new ArrayList<>();
    if (page.statusCode() == 200) {
      KubeJson.mapper().readTree(page.body()).path("syncs").forEach(syncs::add);
    }
    return syncs;
  }

  /** The causes of every sync the engine keeps for a parent (see {@link #keptSyncs}). */
  public List<JsonNode> keptCauses(String kind, String controller, String namespace, String parent) {
    List<JsonNode> causes = new ArrayList<>();
    keptSyncs(kind, controller, namespace, parent).forEach(sync -> sync.path("causes").forEach(causes::add));
    return causes;
  }

  /** A GET on the management server: the status code and the body. */
  public HttpResponse<String> get(boolean metrics, String path) {
    var address = (metrics ? engine.metricsAddress() : engine.healthAddress()).orElseThrow();
    try {
      return http.send(HttpRequest.newBuilder(
              URI.create("http://" + address.getHostString() + ":" + address.getPort() + path)).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    engine.close();
  }
}
