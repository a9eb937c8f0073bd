package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.api.CrossNamespaceChildren;
import dev.metareactor.engine.api.DeleteGuardAnnotation;
import dev.metareactor.engine.api.DeleteParentAnnotation;
import dev.metareactor.engine.api.WorkersAnnotation;
import dev.metareactor.engine.cli.WhyCommand;
import dev.metareactor.engine.controller.OtherNamespaceChildren;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.InMemoryTraces;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.queue.Trigger;
import dev.metareactor.http.HookServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * What Metacontroller's users asked for and never got, each on the real control plane: per-controller workers
 * ({@code metareactor.dev/workers}, issue #1093), an immediate sync on request
 * ({@code metacontroller.k8s.io/sync-requested-at}, #43 and #675) and Events from hooks (#249); and the
 * {@code CreateError} of a controller annotation that is not valid.
 */
class CompositeOperationsIT extends CompositeTestBase {

  private static final int PARENTS = 10;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger mostInFlight = new AtomicInteger();

  /** A hook that answers as the test hook does, after 300 ms, counting the calls in flight. */
  private String slowHook(HookServer server) {
    return server.url("/slow");
  }

  private HookServer slowServer() {
    return HookServer.builder().routeAsync("/slow", request -> {
      mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
      return Mono.delay(Duration.ofMillis(300)).map(tick -> hook.apply(request))
          .doFinally(signal -> inFlight.decrementAndGet());
    }).start();
  }

  private String controllerWithWorkers(String workers, String url) {
    return controllerWith(WorkersAnnotation.KEY, workers, url);
  }

  /** Creates a controller of {@link #parents} calling {@code url}, annotated {@code key: value} unless it is null. */
  private String controllerWith(String key, String value, String url) {
    String name = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    String yaml = controllerYaml(name, parents, "InPlace", url, "");
    if (value != null) {
      yaml = yaml.replace("  name: " + name + "\n", "  name: " + name + "\n  annotations: {"
          + key + ": \"" + value + "\"}\n");
    }
    engine.createController(yaml);
    return name;
  }

  /** Creates the parents, waits for all their children, and returns the most hook calls that were in flight. */
  private int converge(String value) {
    mostInFlight.set(0);
    IntStream.range(0, PARENTS).forEach(i -> {
      if (parents.in(client).withName("p" + i).get() == null) {
        createParent("p" + i, List.of("a"), value);
      } else {
        setSpec("p" + i, List.of("a"), value);
      }
    });
    IntStream.range(0, PARENTS).forEach(i -> awaitChild("p" + i + "-a", value));
    return mostInFlight.get();
  }

  @Test
  void oneWorkerMakesTheHookStrictlySequentialAndAChangeOfTheAnnotationRestartsTheController() {
    parents = ParentCrd.create(cluster, "Serial");
    try (HookServer server = slowServer()) {
      String name = controllerWithWorkers("1", slowHook(server));
      assertThat(converge("one")).as("hook calls in flight at once with 1 worker").isEqualTo(1);

      cluster.kubectl("annotate", "--overwrite", "compositecontrollers/" + name, WorkersAnnotation.KEY + "=4")
          .orThrow();
      await().atMost(TIMEOUT).until(() -> engine.hasEvent("default", name, "Stopped", ""));
      assertThat(converge("two")).as("hook calls in flight at once with 4 workers").isBetween(2, 4);
    }
  }

  @Test
  void anAnnotationThatIsNotAPositiveWholeNumberIsACreateErrorNamingIt() {
    parents = ParentCrd.create(cluster, "Unworkable");
    for (String bad : List.of("0", "many", "100000")) {
      String name = controllerWithWorkers(bad, hooks.url("/sync"));
      await().atMost(TIMEOUT).untilAsserted(() -> assertThat(engine.hasEvent("default", name, "CreateError",
          "metadata.annotations[" + WorkersAnnotation.KEY + "]: must be a whole number from 1 to 1024, got \"" + bad
              + "\"")).isTrue());
      engine.deleteController(name);
    }
  }

  @Test
  void aDeleteGuardThatIsNeitherTrueNorFalseIsACreateErrorNamingIt() {
    parents = ParentCrd.create(cluster, "Unguardable");
    String name = controllerWith(DeleteGuardAnnotation.KEY, "yes", hooks.url("/sync"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(engine.hasEvent("default", name, "CreateError",
        "metadata.annotations[" + DeleteGuardAnnotation.KEY + "]: must be \"true\" or \"false\", got \"yes\""))
        .isTrue());
    engine.deleteController(name);
  }

  /**
   * A hook may delete its parent (upstream #77: parents with a time to live) when the controller allows it, once its
   * children and status are written; its other parents are left alone.
   */
  @Test
  void aParentWhoseHookAnswersDeleteParentIsDeletedWhenTheControllerAllowsIt() {
    parents = ParentCrd.create(cluster, "Expiring");
    controllerWith(DeleteParentAnnotation.KEY, "true", hooks.url("/sync"));
    createParent("kept", List.of("a"), "one");
    Map<String, Object> expired = new HashMap<>(spec(List.of("a"), "one"));
    expired.put("expired", true);
    createParent("expired", expired);

    await().atMost(TIMEOUT).until(() -> parents.in(client).withName("expired").get() == null);
    assertThat(engine.hasEvent(cluster.namespace(), "expired", "DeletedByHook", "(deleteParent)")).isTrue();
    awaitChild("kept-a", "one");
    assertThat(parents.in(client).withName("kept").get()).isNotNull();
  }

  /**
   * Children in another namespace (upstream #236, #238), allowed by {@code metareactor.dev/cross-namespace-children}:
   * created there without a ControllerRef, marked by the parent's UID, shown to the hook keyed {@code namespace/name},
   * updated, and deleted by the engine (which holds the parent with its finalizer) when the parent is deleted; a
   * namespace the annotation does not list refuses the answer whole with a {@code SyncError}, writing nothing.
   */
  @Test
  void childrenInAnAllowedNamespaceAreCreatedUpdatedAndDeletedWithTheirParentOthersRefused() {
    parents = ParentCrd.create(cluster, "Spread");
    String shared = extraNamespace();
    controllerWith(CrossNamespaceChildren.KEY, shared, hooks.url("/sync"));
    Map<String, Object> spec = new HashMap<>(spec(List.of("a"), "one"));
    spec.put("namespaces", List.of(cluster.namespace(), shared));
    GenericKubernetesResource parent = createParent("spread", spec);

    ConfigMap there = await().atMost(TIMEOUT).until(
        () -> client.configMaps().inNamespace(shared).withName("spread-a").get(), cm -> cm != null);
    assertThat(there.getMetadata().getOwnerReferences()).isEmpty();
    assertThat(there.getMetadata().getLabels())
        .containsEntry(OtherNamespaceChildren.PARENT_UID_LABEL, parent.getMetadata().getUid());
    awaitChild("spread-a", "one");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(
        hook.lastRequest.get("spread").path("children").path("ConfigMap.v1").propertyNames())
        .containsExactlyInAnyOrder("spread-a", shared + "/spread-a"));

    spec.put("value", "two");
    patchParent("spread", Map.of("spec", spec));
    await().atMost(TIMEOUT).until(() -> client.configMaps().inNamespace(shared).withName("spread-a").get(),
        cm -> cm != null && "two".equals(cm.getData().get("value")));

    Map<String, Object> stray = new HashMap<>(spec(List.of("a"), "one"));
    stray.put("namespaces", List.of(cluster.namespace(), "not-" + shared));
    createParent("stray", stray);
    await().atMost(TIMEOUT).until(() -> hasSyncError("stray", "is in namespace not-" + shared + " but its parent is in "
        + cluster.namespace() + ", which CompositeController"));
    assertThat(client.configMaps().withName("stray-a").get()).as("nothing of the answer written").isNull();

    parents.in(client).withName("spread").delete();
    parents.in(client).withName("stray").delete();
    await().atMost(TIMEOUT).until(() -> client.configMaps().inNamespace(shared).withName("spread-a").get() == null
        && parents.in(client).withName("spread").get() == null && parents.in(client).withName("stray").get() == null);
  }

  /**
   * Children ordered by {@code metareactor.dev/order} (upstream GoogleCloudPlatform/metacontroller#123: the volume
   * claims before the StatefulSet) are created one order at a time, each once those before it exist, and deleted in
   * reverse, highest order first: three phases each way, as the API server saw them.
   */
  @Test
  void orderedChildrenAreCreatedInTheirOrderAndDeletedInReverse() throws Exception {
    parents = ParentCrd.create(cluster, "Ordered");
    controller(parents, "InPlace", "");
    List<String> deleted = new CopyOnWriteArrayList<>();
    try (Watch watch = client.configMaps().inNamespace(cluster.namespace()).watch(new Watcher<>() {
      @Override
      public void eventReceived(Action action, ConfigMap configMap) {
        if (action == Action.DELETED) {
          deleted.add(configMap.getMetadata().getName());
        }
      }

      @Override
      public void onClose(WatcherException cause) { }
    })) {
      Map<String, Object> spec = new HashMap<>(spec(List.of("c", "a", "b"), "one"));
      spec.put("orders", Map.of("ordered-a", "0", "ordered-b", "1", "ordered-c", "2"));
      createParent("ordered", spec);
      awaitChild("ordered-c", "one");
      List<Long> created = Stream.of("ordered-a", "ordered-b", "ordered-c").map(name -> Long.parseLong(
          client.configMaps().withName(name).get().getMetadata().getResourceVersion())).toList();
      assertThat(created).as("created a, then b, then c").isSorted().doesNotHaveDuplicates();

      spec.put("names", List.of());
      patchParent("ordered", Map.of("spec", spec));
      await().atMost(TIMEOUT).until(() -> deleted.size() == 3);
      assertThat(deleted).containsExactly("ordered-c", "ordered-b", "ordered-a");
    }
  }

  /**
   * A parent whose sync failed waits out its backoff (here 300 s) unless an event brings it back: annotating it
   * with {@code metacontroller.k8s.io/sync-requested-at} is such an event, even for a controller that ignores
   * status changes, and the annotation is no spec change (the generation stays).
   */
  @Test
  void annotatingAParentWithSyncRequestedAtSyncsItAtOnceDespiteItsBackoff() {
    engine.close();
    engine = EngineUnderTest.start(cluster, "--retry-base-delay=300s",
        "--retry-max-delay=300s");
    parents = ParentCrd.create(cluster, "Poked");
    String name = "cc-" + UUID.randomUUID().toString().substring(0, 8);
    engine.createController(controllerYaml(name, parents, "InPlace", hooks.url("/sync"), "")
        .replace("    resource: " + parents.plural() + "\n", "    resource: " + parents.plural()
            + "\n    ignoreStatusChanges: true\n"));
    hook.failing = true;
    createParent("poked", List.of("a"), "one");
    await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "poked", "SyncError", ""));
    hook.failing = false;
    int before = hook.calls.get("poked").get();

    cluster.kubectl("annotate", "--overwrite", parents.plural() + "/poked",
        "metacontroller.k8s.io/sync-requested-at=" + Instant.now()).orThrow();
    awaitChild("poked-a", "one");
    assertThat(hook.calls.get("poked").get()).isGreaterThan(before);
    assertThat(parents.in(client).withName("poked").get().getMetadata().getGeneration()).isEqualTo(1);
  }

  /** A hook's {@code events} are recorded on the parent; a malformed one fails the sync, naming the field. */
  @Test
  void theEventsAHookAsksForAreRecordedOnTheParentAndABadOneIsASyncError() {
    parents = ParentCrd.create(cluster, "Eventful");
    AtomicReference<String> type = new AtomicReference<>(
        "Normal");
    try (HookServer server = HookServer.builder().route("/sync", request -> {
      ObjectNode answer = (ObjectNode) hook.apply(request);
      answer.putArray("events").addObject().put("type", type.get()).put("reason", "BackupTaken")
          .put("message", "backup of " + request.path("parent").path("metadata").path("name").asString()
              + " done");
      return answer;
    }).start()) {
      engine.createController(controllerYaml("cc-" + UUID.randomUUID().toString().substring(0, 8), parents,
          "InPlace", server.url("/sync"), ""));
      createParent("loud", List.of("a"), "one");
      awaitChild("loud-a", "one");
      await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "loud", "BackupTaken",
          "backup of loud done"));

      type.set("Shouting");
      setSpec("loud", List.of("a"), "two");
      await().atMost(TIMEOUT).until(() -> engine.hasEvent(cluster.namespace(), "loud", "SyncError",
          "events[0].type must be Normal or Warning"));
    }
  }
  /**
   * {@code ignoreStatusChanges} on a child type (upstream's #986, finished there for parents only): someone writing
   * a child's status alone does not sync its parent; a change of the child's labels does. The change of another
   * parent's child, on the same informer and so routed after it, is the clock that says the status change was seen.
   */
  @Test
  void aChildTypeWithIgnoreStatusChangesDoesNotSyncTheParentForAChangeOfAChildsStatusAlone() {
    parents = ParentCrd.create(cluster, "Keeper");
    ParentCrd gadgets = ParentCrd.create(cluster, "Gadget");
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    try (HookServer server = HookServer.builder().route("/sync", request -> {
      String parent = request.path("parent").path("metadata").path("name").asString();
      calls.computeIfAbsent(parent, p -> new AtomicInteger()).incrementAndGet();
      ObjectNode answer = JsonNodeFactory.instance.objectNode();
      ObjectNode gadget = answer.putArray("children").addObject().put("apiVersion", gadgets.apiVersion())
          .put("kind", gadgets.kind());
      gadget.putObject("metadata").put("name", parent + "-gadget");
      gadget.putObject("spec").put("size", 1);
      answer.putObject("status").put("observed",
          request.path("children").path(gadgets.kind() + "." + gadgets.apiVersion()).size());
      return answer;
    }).start()) {
      engine.createController("""
          apiVersion: metacontroller.k8s.io/v1alpha1
          kind: CompositeController
          metadata:
            name: cc-%s
          spec:
            generateSelector: true
            parentResource:
              apiVersion: %s
              resource: %s
              ignoreStatusChanges: true
            childResources:
            - apiVersion: %s
              resource: %s
              ignoreStatusChanges: true
            hooks:
              sync:
                webhook:
                  url: %s
          """.formatted(UUID.randomUUID().toString().substring(0, 8), parents.apiVersion(), parents.plural(),
          gadgets.apiVersion(), gadgets.plural(), server.url("/sync")));
      createParent("quiet", Map.of());
      createParent("clock", Map.of());
      await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("quiet")).containsEntry("observed", 1));
      await().atMost(TIMEOUT).untilAsserted(() -> assertThat(status("clock")).containsEntry("observed", 1));
      int before = calls.get("quiet").get();

      gadgets.in(client).withName("quiet-gadget").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"status\": {\"temperature\": 40}}");
      int clockBefore = calls.get("clock").get();
      gadgets.in(client).withName("clock-gadget").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"metadata\": {\"labels\": {\"tick\": \"1\"}}}");
      await().atMost(TIMEOUT).until(() -> calls.get("clock").get() > clockBefore);
      assertThat(calls.get("quiet").get()).as("a change of a child's status alone is ignored").isEqualTo(before);

      gadgets.in(client).withName("quiet-gadget").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"metadata\": {\"labels\": {\"tick\": \"1\"}}}");
      await().atMost(TIMEOUT).until(() -> calls.get("quiet").get() > before);
    }
  }

  /** {@code metareactor why} against the engine's metrics address: its exit code and what it printed. */
  private Map.Entry<Integer, String> why(String controller, String parent) {
    InetSocketAddress address = engine.engine().metricsAddress().orElseThrow();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = WhyCommand.execute(new String[] {"--engine=http://127.0.0.1:" + address.getPort(),
        "compositecontroller/" + controller, cluster.namespace() + "/" + parent}, new PrintWriter(out, true),
        new PrintWriter(err, true));
    return Map.entry(code, out + err.toString());
  }

  /**
   * Why did it sync? Each cause of a sync, on the real control plane, is kept in the engine's ring of recent syncs
   * with what the sync did, and {@code metareactor why} prints it and flags what deserves a look: the engine's start,
   * a child deleted behind its back, a spec change, a label (metadata), a status written by someone else,
   * {@code sync-requested-at}, {@code resyncAfterSeconds}, a retry after the hook failed, the resync period; then a
   * hot loop (the resync period's syncs every second writing nothing) and a hook that keeps failing.
   */
  @Test
  void eachCauseOfASyncIsKeptAndWhyPrintsTheTimelineAndFlagsHotLoopsAndFailures() {
    parents = ParentCrd.create(cluster, "Explained");
    createParent("w", List.of("a"), "one"); // there before the controller: its first sync is the start's
    String name = controller(parents, "InPlace", "  resyncPeriodSeconds: 1\n");
    awaitChild("w-a", "one");
    JsonNode start = awaitSyncFor(name, "w", "start");
    assertThat(start.path("writes").findValuesAsString("name")).contains("w-a");
    assertThat(start.path("hookCalls").asInt()).isEqualTo(1);
    assertThat(start.path("answerBytes").asLong()).isPositive();

    client.configMaps().withName("w-a").delete();
    JsonNode child = awaitSyncFor(name, "w", "child");
    assertThat(child.path("causes").toString()).contains("\"kind\":\"ConfigMap\"", "\"name\":\"w-a\"",
        "\"change\":\"deleted\"");

    setSpec("w", List.of("a"), "two");
    awaitSyncFor(name, "w", "spec");

    cluster.kubectl("label", "--overwrite", parents.plural() + "/w", "explained=yes").orThrow();
    awaitSyncFor(name, "w", "metadata");
    // The engine's own status writes come back as status changes too: count only syncs started after this one.
    Instant statusPatched = Instant.now().minusMillis(50);
    cluster.kubectl("patch", parents.plural() + "/w", "--subresource=status", "--type=merge", "-p",
        "{\"status\": {\"note\": \"set by a person\"}}").orThrow();
    await().atMost(TIMEOUT).until(() -> keptSyncs(name, "w").stream().anyMatch(sync ->
        !Instant.parse(sync.path("time").asString()).isBefore(statusPatched)
            && sync.path("causes").findValuesAsString("cause").contains("status")));

    hook.resyncAfterSeconds = 1.0;
    cluster.kubectl("annotate", "--overwrite", parents.plural() + "/w",
        "metacontroller.k8s.io/sync-requested-at=" + Instant.now()).orThrow();
    awaitSyncFor(name, "w", "sync_requested");
    awaitSyncFor(name, "w", "resync_after");
    hook.resyncAfterSeconds = null;

    hook.failing = true;
    setSpec("w", List.of("a"), "three");
    JsonNode retry = awaitSyncFor(name, "w", "retry_failed");
    assertThat(retry.path("outcome").asString()).isEqualTo("failed");
    assertThat(retry.path("error").asString()).contains("500");
    Map.Entry<Integer, String> failing = await().atMost(TIMEOUT).until(() -> why(name, "w"),
        why -> why.getValue().contains("! failing"));
    hook.failing = false;
    awaitChild("w-a", "three");
    awaitSyncFor(name, "w", "resync_period");

    // Left alone, the resync period syncs it every second with nothing to write: a hot loop by why's measure.
    Map.Entry<Integer, String> looping = await().atMost(TIMEOUT).until(() -> why(name, "w"),
        why -> why.getValue().contains("! hot loop"));
    System.out.println("metareactor why, a failing hook:\n" + failing.getValue());
    System.out.println("metareactor why, a resync period with nothing to write:\n" + looping.getValue());
    assertThat(looping.getKey()).isEqualTo(WhyCommand.FLAGGED);
    assertThat(looping.getValue()).contains("synced because resync period; waited",
        "most often because resync period");
    assertThat(failing.getKey()).isEqualTo(WhyCommand.FLAGGED);
    assertThat(failing.getValue()).contains("synced because retry after an error", "; failed: ", "500");
  }

  /**
   * {@code --tracing} on the real control plane, spans exported by the engine's own OpenTelemetry setup into memory
   * ({@link InMemoryTraces}): the first sync of a parent is one trace, its root {@code sync <controller>} carrying
   * its causes (the controller's start) and its queue wait, under it the hook call, one span per child created and
   * the status write around its {@code status <Kind>} write; the hook received the hook call's W3C {@code
   * traceparent}, and its own {@link HookServer} span continues the trace under the hook call.
   */
  @Test
  void aTracedSyncIsOneTraceOfItsCausesHookCallWritesAndStatusWhichTheHookContinues() {
    engine.close(); // this test's engine traces
    InMemoryTraces.Traced traced = InMemoryTraces.start(cluster);
    engine = traced.engine();
    InMemorySpanExporter hookSpans = InMemorySpanExporter.create();
    List<String> traceparents = new CopyOnWriteArrayList<>();
    try (OpenTelemetrySdk hookTracing = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(hookSpans))
                .build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
        HookServer tracedHook = HookServer.builder().tracing(hookTracing)
            .routeWithHeaders("/sync", (request, headers) -> {
              traceparents.add(String.valueOf(headers.get("traceparent")));
              return Mono.just(hook.apply(request));
            }).start()) {
      parents = ParentCrd.create(cluster, "Traced");
      createParent("t", List.of("a", "b"), "one"); // there before the controller: its first sync is the start's
      String name = "cc-" + UUID.randomUUID().toString().substring(0, 8);
      engine.createController(controllerYaml(name, parents, "InPlace", tracedHook.url("/sync"), ""));
      awaitChild("t-a", "one");
      awaitChild("t-b", "one");

      // The sync that created the children, once it and its children are exported.
      SpanData sync = await().atMost(TIMEOUT).until(() -> traced.spans().getFinishedSpanItems().stream()
              .filter(span -> span.getName().equals("sync " + name)
                  && !children(traced.spans(), span, "create ConfigMap").isEmpty()
                  && !children(traced.spans(), span, "write status").isEmpty())
              .findFirst(), Optional::isPresent).orElseThrow();
      assertThat(sync.getParentSpanContext().isValid()).as("the sync span is a root").isFalse();
      assertThat(sync.getAttributes().get(AttributeKey.stringKey("metareactor.sync.causes")))
          .contains(Trigger.Cause.START.text());
      assertThat(sync.getAttributes().get(AttributeKey.doubleKey("metareactor.queue.wait_ms"))).isNotNull()
          .isNotNegative();
      assertThat(sync.getAttributes().get(AttributeKey.stringKey("k8s.object.name"))).isEqualTo("t");
      assertThat(sync.getAttributes().get(AttributeKey.stringKey("metareactor.sync.outcome"))).isEqualTo("success");

      List<SpanData> hookCalls = children(traced.spans(), sync, "hook sync");
      assertThat(hookCalls).hasSize(1);
      SpanData hookCall = hookCalls.get(0);
      assertThat(hookCall.getKind()).isEqualTo(SpanKind.CLIENT);
      assertThat(children(traced.spans(), sync, "create ConfigMap"))
          .extracting(span -> span.getAttributes().get(AttributeKey.stringKey("k8s.object.name")))
          .containsExactlyInAnyOrder("t-a", "t-b");
      List<SpanData> status = children(traced.spans(), sync, "write status");
      assertThat(status).hasSize(1);
      assertThat(children(traced.spans(), status.get(0), "status " + parents.kind()))
          .extracting(span -> span.getAttributes().get(AttributeKey.stringKey("k8s.object.name")))
          .containsExactly("t");

      // The hook was called under the hook call's span and continued the trace there.
      assertThat(hookCall.getSpanContext().isSampled()).isTrue();
      assertThat(traceparents).contains("00-" + sync.getTraceId() + "-" + hookCall.getSpanId() + "-"
          + hookCall.getSpanContext().getTraceFlags().asHex());
      SpanData served = await().atMost(TIMEOUT).until(() -> hookSpans.getFinishedSpanItems().stream()
          .filter(span -> span.getParentSpanId().equals(hookCall.getSpanId())).findFirst(), Optional::isPresent)
          .orElseThrow();
      assertThat(served.getName()).isEqualTo("POST /sync");
      assertThat(served.getTraceId()).isEqualTo(sync.getTraceId());
      assertThat(served.getKind()).isEqualTo(SpanKind.SERVER);
    }
  }

  /** The spans {@code name} whose parent is {@code parent}, in its trace. */
  private static List<SpanData> children(InMemorySpanExporter spans, SpanData parent, String name) {
    return spans.getFinishedSpanItems().stream()
        .filter(span -> span.getName().equals(name) && span.getParentSpanId().equals(parent.getSpanId())
            && span.getTraceId().equals(parent.getTraceId()))
        .toList();
  }
}
