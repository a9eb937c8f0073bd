package dev.metareactor.engine.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.faults.MisbehavingHook.Mode;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LoopbackPorts;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hook faults: beside the {@link FaultLoad}, for each fault {@value #FLAKY} parents of their own CompositeController
 * call a {@link MisbehavingHook}, which gives each one child while healthy. While those hooks fail, each in its way,
 * the load runs an update wave: its invariants must hold and its convergence time is reported beside a wave measured
 * just before with every hook healthy. Each failing parent gets a {@code SyncError} Event naming the
 * problem (none for a 429 storm, which is waited out), every child survives the fault with its UID, and every parent
 * converges once its hook is healthy again. The one answer the engine follows although it deletes the children (no
 * {@code children} field, without {@code metareactor.dev/delete-guard}: Metacontroller's behaviour) gets a
 * {@code MissingChildren} Warning on every parent instead.
 *
 * <p>The faults run side by side in a few windows (see {@link #windows}), against one load and one engine
 * ({@link SharedLoadFaultSuite}: a hook's fault leaves both as it found them); each fault gets parents, a CRD, a hook,
 * a controller and a namespace of its own, so that no Event, child or log line of another fault counts for it.
 */
class HookFaultsIT extends SharedLoadFaultSuite {

  private static final Logger LOG = LoggerFactory.getLogger(HookFaultsIT.class);
  private static final int FLAKY = 20;
  /** The flaky controller's webhook timeout: a hanging or trickling hook is cut after it. */
  private static final String HOOK_TIMEOUT = "2s";
  private static final String BREAKER_OPEN = "circuit breaker is open, failing fast without calling the hook";
  private static final String SECRET_USER = "hook-user";
  private static final String SECRET_PASSWORD = "Pa55w0rd-of-the-hook";
  private static final String SECRET_TOKEN = "T0k3n-of-the-hook";
  /**
   * The engine's heap for these tests; it exits when it runs out. Answers built to blow up when parsed take 225 MB
   * each unbounded: this holds the load's caches and the budget of hook answers in flight (128 MiB by default).
   */
  private static final String ENGINE_HEAP = "-Xmx320m";

  /** The faults, each with what its Event says ({@code null}: no error Event at all). */
  enum Fault {
    ERROR_500(Mode.ERROR_500, "500"),
    CONNECTION_REFUSED(null, "onnection refused"),
    HANG(Mode.HANG, "timed out after 2s"),
    GARBAGE(Mode.GARBAGE, "JSON"),
    OVERSIZED(Mode.OVERSIZED, "exceeds the limit of 8388608 bytes"),
    SLOW_LORIS(Mode.SLOW_LORIS, "timed out after 2s"),
    TOO_MANY_REQUESTS(Mode.TOO_MANY_REQUESTS, null),
    /** An answer without {@code children} under the delete guard: refused, the children kept. */
    NO_CHILDREN_FIELD(Mode.NO_CHILDREN_FIELD, "has no \"children\"", true),
    /** The same answer without the guard: followed as Metacontroller follows it, every child deleted, Warned. */
    NO_CHILDREN_FIELD_UNGUARDED(Mode.NO_CHILDREN_FIELD, null, false),
    /** Waited out with backoff, never called in a hot loop: see {@link #maxCallsWithBackoff}. */
    TOO_MANY_REQUESTS_WITHOUT_RETRY_AFTER(Mode.TOO_MANY_REQUESTS_BARE, "too many requests"),
    DEEP_NESTING(Mode.DEEP_NESTING, "nesting depth (201) exceeds the maximum allowed (200"),
    /** Refused at the token limit, or for want of memory budget when many arrive at once: both say "exceeds". */
    MILLIONS_OF_OBJECTS(Mode.MILLIONS_OF_OBJECTS, "response exceeds"),
    /** A failing hook whose URL carries secrets: they show nowhere (see {@link #assertNoSecretShown}). */
    SECRETS_IN_THE_URL(Mode.ERROR_500, "500") {
      @Override
      String url(String hookUrl) {
        return hookUrl.replace("http://", "http://" + SECRET_USER + ":" + SECRET_PASSWORD + "@")
            + "?token=" + SECRET_TOKEN;
      }
    };

    final Mode mode;
    final String says;
    /** Whether the flaky controller carries {@code metareactor.dev/delete-guard: "true"}. */
    final boolean guarded;

    Fault(Mode mode, String says) {
      this(mode, says, false);
    }

    Fault(Mode mode, String says, boolean guarded) {
      this.mode = mode;
      this.says = says;
      this.guarded = guarded;
    }

    /** Whether every child must survive the fault: all but the answer followed as upstream follows it. */
    boolean childrenSurvive() {
      return this != NO_CHILDREN_FIELD_UNGUARDED;
    }

    /** The flaky controller's hook URL. */
    String url(String hookUrl) {
      return hookUrl;
    }

    /** Whether its answers are megabytes that blow up when parsed: such a fault runs alone (see {@link #windows}). */
    boolean heavy() {
      return this == OVERSIZED || this == DEEP_NESTING || this == MILLIONS_OF_OBJECTS;
    }

    /**
     * The flaky controller's webhook timeout: {@link #HOOK_TIMEOUT}, which cuts a hanging or trickling hook, but
     * longer for a heavy answer, which is refused for its size: reading 8 MB for each of 20 parents at once outlasted
     * 2 s on a busy machine once (every call timed out, and the breaker opened before any said "exceeds"), and the
     * refusal is what these faults test, not the clock.
     */
    String hookTimeout() {
      return heavy() ? "20s" : HOOK_TIMEOUT;
    }
  }

  /**
   * The faults in the windows they run in: those whose answers are large or costly to parse (OVERSIZED, DEEP_NESTING,
   * MILLIONS_OF_OBJECTS) each alone, since at once they would share the memory budget of hook answers in flight and an
   * answer refused for want of budget would not say what its own fault says; all the others at once.
   */
  static Stream<List<Fault>> windows() {
    return Stream.concat(Stream.of(Arrays.stream(Fault.values()).filter(fault -> !fault.heavy()).toList()),
        Arrays.stream(Fault.values()).filter(Fault::heavy).map(List::of));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("windows")
  void failingHooksFailOnlyTheirOwnParentsAndTheyConvergeOnceHealthy(List<Fault> faults, LocalCluster cluster)
      throws Exception {
    List<Flaky> flakies = new ArrayList<>();
    try {
      for (Fault fault : faults) {
        flakies.add(Flaky.create(fault, cluster));
      }
      for (Flaky flaky : flakies) {
        applyFlakyController(flaky, flaky.fault().url(flaky.hook().url()));
        IntStream.range(0, FLAKY).forEach(i -> flaky.crd().in(flaky.client()).resource(flaky.crd().object(
            flaky.namespace(), "flaky-" + i, Map.of("value", "one"))).create());
      }
      Map<Fault, Map<String, String>> children = new EnumMap<>(Fault.class);
      for (Flaky flaky : flakies) {
        awaitFlakyConverged(flaky, "one");
        children.put(flaky.fault(), flakyChildren(flaky));
      }
      // The load's values in this window: the same spelling as its first fault's (a label value, for the decorator).
      String value = faults.get(0).name().toLowerCase(Locale.ROOT);
      load.setValue(value + "-healthy");
      Duration healthy = awaitInvariants();

      Map<Fault, Integer> callsAtFault = new EnumMap<>(Fault.class);
      long faultStart = System.nanoTime();
      for (Flaky flaky : flakies) {
        callsAtFault.put(flaky.fault(), flaky.hook().calls());
        if (flaky.fault().mode != null) {
          flaky.hook().mode(flaky.fault().mode);
        } else {
          applyFlakyController(flaky, "http://127.0.0.1:" + LoopbackPorts.free() + "/sync");
        }
      }
      // A healthy call can time out on a busy machine while the controller starts: only errors from now on count.
      Map<Fault, Map<String, Integer>> errorsBefore = new EnumMap<>(Fault.class);
      Map<Fault, Integer> callsBefore = new EnumMap<>(Fault.class);
      for (Flaky flaky : flakies) {
        errorsBefore.put(flaky.fault(), syncErrorCounts(flaky));
        setFlakyValue(flaky, "broken");
        callsBefore.put(flaky.fault(), flaky.hook().calls());
      }
      load.setValue(value + "-beside-the-faults");
      Duration faulty = awaitInvariants();
      LOG.info("{}: the load's update wave took {} ms with every hook healthy, {} ms beside {} failing parents"
          + " (calls to the failing hooks meanwhile: {}; JVM memory in use {} MB)", faults, healthy.toMillis(),
          faulty.toMillis(), FLAKY * faults.size(), flakies.stream().collect(Collectors.toMap(Flaky::fault,
              flaky -> flaky.hook().calls() - callsBefore.get(flaky.fault()))),
          Math.round(invariants.metric(metricsPort, "jvm_memory_used_bytes") / (1 << 20)));

      for (Flaky flaky : flakies) {
        Fault fault = flaky.fault();
        if (fault.says != null) {
          await().atMost(CONVERGE).untilAsserted(() -> assertThat(syncErrors(flaky).keySet())
              .as("%s: flaky parents with a SyncError Event", fault).hasSize(FLAKY));
          // Each names the problem, or, once the hook client's circuit breaker has opened on the failures, says so.
          assertThat(syncErrors(flaky).values()).as("%s: the SyncError Events", fault)
              .allSatisfy(message -> assertThat(message).containsAnyOf(fault.says, BREAKER_OPEN))
              .anySatisfy(message -> assertThat(message).contains(fault.says));
          // Zap-shaped lines; a failed sync's line names its controller, kind, key and run as fields of their own
          // (this fault's: its namespace and its controller are no other's).
          assertThat(engine.jsonLines()).as("%s: the engine's log", fault).isNotEmpty()
              .allSatisfy(line -> assertThat(line.has("level") && line.has("ts") && line.has("msg")).isTrue())
              .anySatisfy(line -> {
                assertThat(line.path("level").asString()).isEqualTo("warn");
                assertThat(line.path("logger").asString()).isEqualTo("CompositeController");
                assertThat(line.path("msg").asString()).contains("sync of " + flaky.namespace() + "/flaky-");
                assertThat(line.path("controller").asString()).isEqualTo(flaky.controllerName(load));
                assertThat(line.path("kind").asString()).isEqualTo("CompositeController");
                assertThat(line.path("key").asString()).startsWith(flaky.namespace() + "/flaky-");
                assertThat(line.path("sync").isNumber()).isTrue();
              });
        } else if (fault.childrenSurvive()) {
          await().atMost(CONVERGE).until(() -> flaky.hook().calls() - callsBefore.get(fault) >= 2 * FLAKY);
        } else {
          await().atMost(CONVERGE).untilAsserted(() -> assertThat(events(flaky, "MissingChildren").keySet())
              .as("%s: flaky parents with a MissingChildren Warning", fault).hasSize(FLAKY));
          assertThat(events(flaky, "MissingChildren").values())
              .allSatisfy(message -> assertThat(message).contains("deleting all 1 observed"));
          await().atMost(CONVERGE).until(() -> flakyChildren(flaky).isEmpty());
        }
        if (fault.childrenSurvive()) {
          assertThat(flakyChildren(flaky)).as("%s: every child, with its UID, through the fault", fault)
              .isEqualTo(children.get(fault));
        }
        if (fault == Fault.TOO_MANY_REQUESTS_WITHOUT_RETRY_AFTER) {
          Duration window = Duration.ofNanos(System.nanoTime() - faultStart);
          int calls = flaky.hook().calls() - callsAtFault.get(fault);
          LOG.info("{}: {} calls in {} ms for {} parents", fault, calls, window.toMillis(), FLAKY);
          assertThat(calls).as("%s: calls in %s", fault, window).isLessThanOrEqualTo(maxCallsWithBackoff(window));
        }
        if (fault == Fault.SECRETS_IN_THE_URL) {
          assertNoSecretShown(flaky);
        }
      }

      for (Flaky flaky : flakies) {
        flaky.hook().mode(Mode.HEALTHY);
        applyFlakyController(flaky, flaky.fault().url(flaky.hook().url()));
        // An answer followed leaves nothing to retry: only a change brings those parents to the healthy hook again.
        if (!flaky.fault().childrenSurvive()) {
          setFlakyValue(flaky, "healed");
        }
      }
      for (Flaky flaky : flakies) {
        Fault fault = flaky.fault();
        awaitFlakyConverged(flaky, fault.childrenSurvive() ? "broken" : "healed");
        if (fault.childrenSurvive()) {
          assertThat(flakyChildren(flaky)).as("%s: every child, with its UID, once healthy again", fault)
              .isEqualTo(children.get(fault));
        }
        if (fault.says == null) {
          assertThat(syncErrorCounts(flaky)).as("%s: error Events for a hook answering 429 with Retry-After, or an"
              + " answer followed as upstream follows it", fault).isEqualTo(errorsBefore.get(fault));
        }
      }
      assertThat(engine.isAlive()).isTrue();
    } finally {
      for (Flaky flaky : flakies) {
        load.cluster.kubectl("delete", "compositecontrollers", flaky.controllerName(load), "--ignore-not-found");
        flaky.hook().close();
      }
    }
  }

  /**
   * One fault's flaky side: its parents' type, the hook they call, a namespace of their own (theirs, their children's
   * and their Events') and the name of their controller (suffixed to the load's {@code hostedBy}).
   */
  private record Flaky(Fault fault, ParentCrd crd, MisbehavingHook hook, KubernetesClient client, String namespace,
      String controller) {

    /** A new CRD, hook and namespace for {@code fault}, deleted after the test (the hook when closed). */
    static Flaky create(Fault fault, LocalCluster cluster) {
      String name = "flaky-" + fault.name().toLowerCase(Locale.ROOT).replace('_', '-');
      return new Flaky(fault, ParentCrd.create(cluster, "Flaky"), new MisbehavingHook(), cluster.client(),
          cluster.createNamespace(name), name);
    }

    String controllerName(FaultLoad load) {
      return load.hostedBy + "-" + controller;
    }
  }

  @Override
  Map<String, String> engineEnvironment() {
    return Map.of("JAVA_TOOL_OPTIONS", ENGINE_HEAP + " -XX:+ExitOnOutOfMemoryError");
  }

  /**
   * The most calls {@value #FLAKY} parents make in {@code window} to a hook that keeps answering 429 without
   * {@code Retry-After}, by the work queue's contract: each failed run waits its backoff (5 ms doubling), so a parent
   * runs at most {@code 1 + floor(log2(window / 5 ms + 1))} times; one more each for the change that started the
   * window and for a request the client resends when a pooled connection turned out closed.
   */
  private static int maxCallsWithBackoff(Duration window) {
    double steps = Math.floor(Math.log(window.toNanos() / 5e6 + 1) / Math.log(2));
    return FLAKY * (int) (3 + steps);
  }

  /** The URL's user info and query appear in none of the engine's log lines, Events or metrics. */
  private void assertNoSecretShown(Flaky flaky) throws Exception {
    String[] secrets = {SECRET_USER, SECRET_PASSWORD, SECRET_TOKEN};
    assertThat(engine.output()).as("the engine's log").doesNotContain(secrets);
    List<Event> events = load.client.v1().events().inAnyNamespace().list().getItems();
    assertThat(events).extracting(event -> String.valueOf(event.getMessage())).as("Events").isNotEmpty()
        .allSatisfy(message -> assertThat(message).doesNotContain(secrets));
    String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(), BodyHandlers.ofString()).body();
    assertThat(metrics).as("/metrics").contains("url=\"http://127.0.0.1:").doesNotContain(secrets);
    // The user info is sent as basic auth, over plain http: the controller is told, once.
    assertThat(events).filteredOn(event -> "InsecureCredentials".equals(event.getReason())
            && flaky.controllerName(load).equals(event.getInvolvedObject().getName()))
        .singleElement().satisfies(event -> {
          assertThat(event.getCount()).isEqualTo(1);
          assertThat(event.getMessage()).contains("sends Basic credentials over plain http");
        });
  }

  private void applyFlakyController(Flaky flaky, String url) {
    load.applyComposite(flaky.controller(), flaky.fault().guarded ? Map.of(DeleteGuardAnnotation.KEY, "true")
        : Map.of(), """
        generateSelector: true
        parentResource: {apiVersion: %s, resource: %s}
        childResources:
        - {apiVersion: v1, resource: configmaps}
        hooks:
          sync: {webhook: {url: "%s", timeout: %s}}""".formatted(flaky.crd().apiVersion(), flaky.crd().plural(), url,
        flaky.fault().hookTimeout()));
  }

  private void setFlakyValue(Flaky flaky, String value) {
    IntStream.range(0, FLAKY).forEach(i -> flaky.crd().in(flaky.client()).inNamespace(flaky.namespace())
        .withName("flaky-" + i)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\": {\"value\": \"" + value + "\"}}"));
  }

  private void awaitFlakyConverged(Flaky flaky, String value) {
    await().atMost(CONVERGE).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      List<GenericKubernetesResource> parents = flaky.crd().in(flaky.client()).inNamespace(flaky.namespace()).list()
          .getItems();
      assertThat(parents).hasSize(FLAKY).allSatisfy(parent -> assertThat(
          ((Map<?, ?>) parent.getAdditionalProperties().getOrDefault("status", Map.of())).get("value"))
          .as(parent.getMetadata().getName()).isEqualTo(value));
      assertThat(flakyChildren(flaky)).hasSize(FLAKY);
    });
  }

  /** The flaky parents' children, name to UID. */
  private Map<String, String> flakyChildren(Flaky flaky) {
    return flaky.client().configMaps().inNamespace(flaky.namespace()).list().getItems().stream()
        .filter(configMap -> configMap.getMetadata().getName().matches(MisbehavingHook.childOf("flaky-\\d+")))
        .collect(Collectors.toMap(configMap -> configMap.getMetadata().getName(),
            configMap -> configMap.getMetadata().getUid()));
  }

  /** The flaky parents with a SyncError Event, each with its Event's message. */
  private Map<String, String> syncErrors(Flaky flaky) {
    return events(flaky, "SyncError");
  }

  /** The SyncError Events on flaky parents so far, each by name with its count. */
  private Map<String, Integer> syncErrorCounts(Flaky flaky) {
    return flaky.client().v1().events().inNamespace(flaky.namespace()).list().getItems().stream()
        .filter(event -> "SyncError".equals(event.getReason()) && event.getInvolvedObject() != null
            && flaky.crd().kind().equals(event.getInvolvedObject().getKind()))
        .collect(Collectors.toMap(event -> event.getMetadata().getName(),
            event -> event.getCount() == null ? 1 : event.getCount()));
  }

  /** The flaky parents with an Event of {@code reason}, each with its Event's message. */
  private Map<String, String> events(Flaky flaky, String reason) {
    List<Event> events = flaky.client().v1().events().inNamespace(flaky.namespace()).list().getItems();
    return events.stream()
        .filter(event -> reason.equals(event.getReason()) && event.getInvolvedObject() != null
            && flaky.crd().kind().equals(event.getInvolvedObject().getKind()))
        .collect(Collectors.toMap(event -> event.getInvolvedObject().getName(), Event::getMessage,
            (a, b) -> a + " | " + b));
  }
}
