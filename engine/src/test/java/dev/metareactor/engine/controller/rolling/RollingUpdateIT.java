package dev.metareactor.engine.controller.rolling;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.apply.DynamicApply;
import dev.metareactor.engine.cli.PreviewCommand;
import dev.metareactor.engine.it.EngineProcess;
import dev.metareactor.engine.it.EngineUnderTest;
import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.LocalCluster;
import dev.metareactor.testing.k8s.LocalKubernetes;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.Counter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Rolling updates on the real control plane. The parent ({@code Roller}) asks for {@code spec.replicas} children
 * ({@code Member}, a custom resource with the status subresource, namespaced) named {@code <parent>-<i>}, each with
 * the parent's {@code spec.template.image}. Nothing runs the members, so the test plays the kubelet: it marks a
 * member ready by writing its status ({@code observedGeneration} and a {@code Ready} condition), and the rollout
 * moves on only then. Every rollout here is of namespaced children, which Metacontroller's stalls after the first.
 */
@LocalKubernetes
class RollingUpdateIT {

  private static final int REPLICAS = 5;

  private LocalCluster cluster;
  private KubernetesClient client;
  private EngineUnderTest engine;
  private HookServer hooks;
  private ParentCrd rollers;
  private ParentCrd members;
  /** Hook calls per parent. */
  private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

  @BeforeEach
  void start(LocalCluster cluster) {
    this.cluster = cluster;
    this.client = cluster.client();
    this.rollers = ParentCrd.create(cluster, "Roller");
    this.members = ParentCrd.create(cluster, "Member");
    this.hooks = HookServer.builder().route("/sync", this::sync).start();
    this.engine = EngineUnderTest.start(cluster);
  }

  @AfterEach
  void stop() {
    engine.close();
    hooks.close();
  }

  /** The hook: {@code spec.replicas} members with the template's image, in order; an empty status. */
  private JsonNode sync(JsonNode request) {
    JsonNode parent = request.path("parent");
    String name = parent.path("metadata").path("name").asString();
    calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
    ObjectNode response = KubeJson.nodes().objectNode();
    response.putObject("status");
    ArrayNode children = response.putArray("children");
    for (int i = 0; i < parent.path("spec").path("replicas").asInt(); i++) {
      ObjectNode child = children.addObject().put("apiVersion", members.apiVersion()).put("kind", "Member");
      child.putObject("metadata").put("name", name + "-" + i);
      child.putObject("spec").put("image", parent.path("spec").path("template").path("image").asString());
    }
    return response;
  }

  // ---- the controller and the parent

  private String controllerYaml(String name, String method, String revisionHistory) {
    return """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: CompositeController
        metadata:
          name: %s
        spec:
          generateSelector: true
          parentResource:
            apiVersion: %s
            resource: %s
        %s
          childResources:
          - apiVersion: %s
            resource: %s
            updateStrategy:
              method: %s
              statusChecks:
                conditions:
                - type: Ready
                  status: "True"
          hooks:
            sync:
              webhook:
                url: %s
        """.formatted(name, rollers.apiVersion(), rollers.plural(), revisionHistory, members.apiVersion(),
        members.plural(), method, hooks.url("/sync"));
  }

  private void controller(String method) {
    controller(method, "");
  }

  private void controller(String method, String revisionHistory) {
    engine.createController(controllerYaml("roll-" + UUID.randomUUID().toString().substring(0, 8), method,
        revisionHistory));
  }

  private GenericKubernetesResource createParent(String name, String image) {
    return rollers.in(client).resource(rollers.object(cluster.namespace(), name,
        Map.of("replicas", REPLICAS, "template", Map.of("image", image), "note", "first"))).create();
  }

  private void patchSpec(String parent, Map<String, Object> spec) {
    rollers.in(client).withName(parent).patch(PatchContext.of(PatchType.JSON_MERGE),
        client.getKubernetesSerialization().asJson(Map.of("spec", spec)));
  }

  private void setImage(String parent, String image) {
    patchSpec(parent, Map.of("template", Map.of("image", image)));
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> updated(String parent) {
    GenericKubernetesResource object = rollers.in(client).withName(parent).get();
    Object status = object == null ? null : object.getAdditionalProperties().get("status");
    if (!(status instanceof Map<?, ?> map) || !(map.get("conditions") instanceof List<?> conditions)) {
      return Map.of();
    }
    return conditions.stream().map(c -> (Map<String, Object>) c)
        .filter(c -> "Updated".equals(c.get("type"))).findFirst().orElse(Map.of());
  }

  private boolean onLatest(String parent) {
    return "OnLatestRevision".equals(updated(parent).get("reason"));
  }

  /** Whether the rollout waits, with a message about {@code child} that contains {@code why}. */
  private boolean waitingOn(String parent, String child, String why) {
    Map<String, Object> condition = updated(parent);
    String message = String.valueOf(condition.get("message"));
    return "RolloutWaiting".equals(condition.get("reason")) && message.contains("Member " + child + " ")
        && message.contains(why);
  }

  // ---- the members

  private String member(String parent, int i) {
    return parent + "-" + i;
  }

  private List<GenericKubernetesResource> memberList() {
    return members.in(client).inNamespace(cluster.namespace()).list().getItems();
  }

  @SuppressWarnings("unchecked")
  private static String image(GenericKubernetesResource member) {
    return String.valueOf(((Map<String, Object>) member.getAdditionalProperties().get("spec")).get("image"));
  }

  /** Each member's image, by index; {@code null} for a missing member. */
  private List<String> images(String parent) {
    Map<String, String> byName = new ConcurrentHashMap<>();
    memberList().forEach(member -> byName.put(member.getMetadata().getName(), image(member)));
    return IntStream.range(0, REPLICAS).mapToObj(i -> byName.get(member(parent, i))).toList();
  }

  /** The first {@code moved} on {@code to}, the rest still on {@code from}. */
  private static List<String> firstMoved(int moved, String to, String from) {
    return IntStream.range(0, REPLICAS).mapToObj(i -> i < moved ? to : from).toList();
  }

  private long count(String parent, String image) {
    return images(parent).stream().filter(image::equals).count();
  }

  private Map<String, String> uids() {
    Map<String, String> uids = new ConcurrentHashMap<>();
    memberList().forEach(member -> uids.put(member.getMetadata().getName(), member.getMetadata().getUid()));
    return uids;
  }

  /** Plays the kubelet: the member has observed its generation and is Ready. */
  private void markReady(String name) {
    GenericKubernetesResource member = members.in(client).withName(name).get();
    Map<String, Object> status = Map.of("observedGeneration", member.getMetadata().getGeneration(),
        "conditions", List.of(Map.of("type", "Ready", "status", "True")));
    members.in(client).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
        client.getKubernetesSerialization().asJson(Map.of("status", status)));
  }

  /** Marks every member ready that has not observed its generation yet. */
  @SuppressWarnings("unchecked")
  private void markAllReady() {
    for (GenericKubernetesResource member : memberList()) {
      Object status = member.getAdditionalProperties().get("status");
      Object observed = status instanceof Map<?, ?> map ? ((Map<String, Object>) map).get("observedGeneration") : null;
      if (!(observed instanceof Number number) || number.longValue() < member.getMetadata().getGeneration()) {
        markReady(member.getMetadata().getName());
      }
    }
  }

  private List<GenericKubernetesResource> revisions() {
    return client.genericKubernetesResources("metacontroller.k8s.io/v1alpha1", "ControllerRevision")
        .inNamespace(cluster.namespace()).list().getItems();
  }

  private List<String> revisionNames() {
    return revisions().stream().map(revision -> revision.getMetadata().getName()).sorted().toList();
  }

  /** A parent of {@link #REPLICAS} members on {@code image}, every member ready, the rollout done. */
  private void converged(String parent, String image) {
    createParent(parent, image);
    await().atMost(TIMEOUT).until(() -> count(parent, image) == REPLICAS);
    markAllReady();
    await().atMost(TIMEOUT).until(() -> onLatest(parent));
  }

  private double memberWrites(String verb) {
    String resource = members.plural() + "." + members.group();
    Predicate<Counter> which = counter -> verb.equals(counter.getId().getTag("verb"))
        && resource.equals(counter.getId().getTag("resource")) && "2xx".equals(counter.getId().getTag("code"));
    return engine.apiRequests(which);
  }

  // ---- the tests

  @Test
  void rollingInPlaceUpdatesOneChildAtATimeEachAfterTheOneBeforeIsReady() {
    controller("RollingInPlace");
    converged("web", "a");
    String first = revisionNames().get(0);
    double updatesBefore = memberWrites("update");

    setImage("web", "b");
    for (int k = 1; k < REPLICAS; k++) {
      String moved = member("web", k - 1);
      await().atMost(TIMEOUT).until(() -> waitingOn("web", moved, "hasn't observed latest spec"));
      assertThat(images("web")).as("after %d moves, only the first %d are on b", k, k)
          .isEqualTo(firstMoved(k, "b", "a"));
      markReady(moved);
    }
    await().atMost(TIMEOUT).until(() -> onLatest("web"));
    assertThat(images("web")).containsOnly("b");
    await().atMost(TIMEOUT).until(() -> revisionNames().size() == 1);
    assertThat(revisionNames()).doesNotContain(first);
    assertThat(String.valueOf(updated("web").get("message")))
        .isEqualTo("latest ControllerRevision: " + revisionNames().get(0));
    assertThat(memberWrites("update") - updatesBefore).as("each member written once, none rewritten")
        .isEqualTo(REPLICAS);
  }

  /**
   * {@code metareactor preview} halfway through a rollout, with the engine stopped: it shows the step the engine
   * would take next — the next member moved to the new image, none after it — and writes nothing.
   */
  @Test
  void aPreviewHalfwayThroughARolloutShowsTheNextStepAndWritesNothing() {
    String controller = "roll-peek-" + UUID.randomUUID().toString().substring(0, 6);
    engine.createController(controllerYaml(controller, "RollingInPlace", ""));
    converged("peek", "a");
    setImage("peek", "b");
    await().atMost(TIMEOUT).until(() -> waitingOn("peek", member("peek", 0), "hasn't observed latest spec"));
    engine.close();
    markReady(member("peek", 0));

    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = PreviewCommand.execute(new String[] {"--kubeconfig", cluster.kubeconfig().toString(),
        "--controller", "compositecontroller/" + controller, "--parent", cluster.namespace() + "/peek", "-o", "json"},
        new PrintWriter(out, true), new PrintWriter(err, true));

    assertThat(exit).as("the next step would be written; stderr: %s", err).isEqualTo(1);
    JsonNode writes = KubeJson.mapper().readTree(out.toString()).path("parents").get(0).path("writes");
    List<String> moved = writes.valueStream().filter(write -> write.path("kind").asString().equals(members.kind()))
        .map(write -> write.path("verb").asString() + " " + write.path("name").asString() + " "
            + write.path("diff").path("spec").path("image").asString(""))
        .toList();
    assertThat(moved).as("the next member moved, none after it: %s", out).containsExactly("update peek-1 b");
    assertThat(images("peek")).as("nothing written").isEqualTo(firstMoved(1, "b", "a"));
  }

  @Test
  void childrenOfTheLatestRevisionThatDidNotChangeAreNeverWritten() {
    controller("RollingInPlace");
    converged("calm", "a");
    double requests = engine.apiRequests();
    int hookCalls = calls.get("calm").get();

    // One change at a time, each once the sync of the one before has called the hook: changes that come while the
    // parent waits in the work queue are synced together, in one call.
    for (int i = 0; i < REPLICAS; i++) {
      members.in(client).withName(member("calm", i)).subresource("status").patch(
          PatchContext.of(PatchType.JSON_MERGE), "{\"status\": {\"restarts\": 1}}");
      int changed = i + 1;
      await().atMost(TIMEOUT).until(() -> calls.get("calm").get() >= hookCalls + changed);
    }

    assertThat(engine.apiRequests()).as("children's status changes sync the parent, which writes nothing")
        .isEqualTo(requests);
  }

  @Test
  void rollingRecreateDeletesAndCreatesOneChildAtATime() {
    controller("RollingRecreate");
    converged("db", "a");
    Map<String, String> before = uids();

    setImage("db", "b");
    for (int k = 1; k < REPLICAS; k++) {
      String moved = member("db", k - 1);
      await().atMost(TIMEOUT).until(() -> waitingOn("db", moved, "failed status check"));
      assertThat(images("db")).isEqualTo(firstMoved(k, "b", "a"));
      Map<String, String> now = uids();
      List<String> recreated = IntStream.range(0, REPLICAS)
          .mapToObj(i -> now.get(member("db", i)).equals(before.get(member("db", i))) ? "same" : "new").toList();
      assertThat(recreated).as("recreated after %d moves", k).isEqualTo(firstMoved(k, "new", "same"));
      markReady(moved);
    }
    await().atMost(TIMEOUT).until(() -> onLatest("db"));
    assertThat(images("db")).containsOnly("b");
    await().atMost(TIMEOUT).until(() -> revisionNames().size() == 1);
  }

  @Test
  void aChangeInTheMiddleOfARolloutEndsWithEveryChildOnTheNewestAndOneRevision() {
    controller("RollingInPlace");
    converged("mid", "a");

    setImage("mid", "b");
    await().atMost(TIMEOUT).until(() -> waitingOn("mid", member("mid", 0), "hasn't observed latest spec"));
    markReady(member("mid", 0));
    await().atMost(TIMEOUT).until(() -> waitingOn("mid", member("mid", 1), "hasn't observed latest spec"));
    assertThat(images("mid")).isEqualTo(List.of("b", "b", "a", "a", "a"));
    assertThat(revisionNames()).hasSize(2);

    setImage("mid", "c");
    await().atMost(TIMEOUT).until(() -> {
      markAllReady();
      return onLatest("mid") && count("mid", "c") == REPLICAS;
    });
    await().atMost(TIMEOUT).until(() -> revisionNames().size() == 1);
  }

  @Test
  void revisionFieldPathsLimitWhatStartsARollout() {
    controller("RollingInPlace", "    revisionHistory:\n      fieldPaths: [\"spec.template\"]");
    converged("paths", "a");
    List<String> revisions = revisionNames();
    Map<String, String> membersBefore = uids();

    patchSpec("paths", Map.of("note", "second"));
    await().atMost(TIMEOUT).until(() -> observedGeneration("paths") == 2);

    assertThat(revisionNames()).as("spec.note is not recorded").isEqualTo(revisions);
    assertThat(uids()).isEqualTo(membersBefore);
    assertThat(onLatest("paths")).isTrue();

    setImage("paths", "b");
    await().atMost(TIMEOUT).until(() -> waitingOn("paths", member("paths", 0), "hasn't observed latest spec"));
    assertThat(revisionNames()).hasSize(2);
  }

  @SuppressWarnings("unchecked")
  private long observedGeneration(String parent) {
    Object status = rollers.in(client).withName(parent).get().getAdditionalProperties().get("status");
    Object observed = status instanceof Map<?, ?> map ? ((Map<String, Object>) map).get("observedGeneration") : null;
    return observed instanceof Number number ? number.longValue() : 0;
  }

  @Test
  void aRolloutLeftHalfwayByMetacontrollerIsContinuedWithoutRecreatingAnything() throws Exception {
    // The layout Metacontroller leaves two members into a rollout from a to b, written by hand from its rules.
    GenericKubernetesResource parent = createParent("legacy", "b");
    for (int i = 0; i < REPLICAS; i++) {
      createMemberAsMetacontrollerDid(parent, member("legacy", i), i < 2 ? "b" : "a");
    }
    markAllReady();
    String a = createRevisionAsMetacontrollerDid(parent, "a", List.of(2, 3, 4));
    String b = createRevisionAsMetacontrollerDid(parent, "b", List.of(0, 1));
    Map<String, String> before = uids();

    controller("RollingInPlace");

    await().atMost(TIMEOUT).until(() -> waitingOn("legacy", member("legacy", 2), "hasn't observed latest spec"));
    assertThat(images("legacy")).isEqualTo(List.of("b", "b", "b", "a", "a"));
    assertThat(revisionNames()).containsExactlyInAnyOrder(a, b);
    await().atMost(TIMEOUT).until(() -> {
      markAllReady();
      return onLatest("legacy") && count("legacy", "b") == REPLICAS;
    });
    assertThat(uids()).as("nothing created again").isEqualTo(before);
    await().atMost(TIMEOUT).until(() -> revisionNames().equals(List.of(b)));
  }

  /** A member as Metacontroller creates one: selector label, last-applied annotation, ControllerRef. */
  private void createMemberAsMetacontrollerDid(GenericKubernetesResource parent, String name, String image) {
    ObjectNode desired = KubeJson.nodes().objectNode().put("apiVersion", members.apiVersion()).put("kind", "Member");
    ObjectNode metadata = desired.putObject("metadata").put("name", name).put("namespace", cluster.namespace());
    metadata.putObject("labels").put("controller-uid", parent.getMetadata().getUid());
    desired.putObject("spec").put("image", image);
    ObjectNode created = DynamicApply.create(desired).object();
    ((ObjectNode) created.get("metadata")).putArray("ownerReferences").add(controllerRef(parent));
    members.in(client).resource(client.getKubernetesSerialization()
        .unmarshal(KubeJson.mapper().writeValueAsString(created), GenericKubernetesResource.class)).create();
  }

  private ObjectNode controllerRef(GenericKubernetesResource parent) {
    return KubeJson.nodes().objectNode().put("apiVersion", rollers.apiVersion()).put("kind", "Roller")
        .put("name", parent.getMetadata().getName()).put("uid", parent.getMetadata().getUid())
        .put("controller", true).put("blockOwnerDeletion", true);
  }

  /**
   * A ControllerRevision as Metacontroller writes one: named {@code <plural>.<group>-<sha1(uid + parentPatch)>}
   * with the patch as Go marshals it (keys sorted, no spaces), labelled with the selector and the parent resource.
   */
  private String createRevisionAsMetacontrollerDid(GenericKubernetesResource parent, String image,
      List<Integer> claimed) throws Exception {
    String uid = parent.getMetadata().getUid();
    String patch = "{\"spec\":{\"note\":\"first\",\"replicas\":" + REPLICAS + ",\"template\":{\"image\":\"" + image
        + "\"}}}";
    MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
    sha1.update(uid.getBytes(StandardCharsets.UTF_8));
    sha1.update(patch.getBytes(StandardCharsets.UTF_8));
    String name = rollers.plural() + "." + rollers.group() + "-" + HexFormat.of().formatHex(sha1.digest());
    ObjectNode revision = KubeJson.nodes().objectNode()
        .put("apiVersion", "metacontroller.k8s.io/v1alpha1").put("kind", "ControllerRevision");
    ObjectNode metadata = revision.putObject("metadata").put("name", name).put("namespace", cluster.namespace());
    metadata.putObject("labels").put("controller-uid", uid)
        .put("metacontroller.k8s.io/apiGroup", rollers.group())
        .put("metacontroller.k8s.io/resource", rollers.plural());
    metadata.putArray("ownerReferences").add(controllerRef(parent));
    revision.set("parentPatch", KubeJson.mapper().readTree(patch));
    ArrayNode names = revision.putArray("children").addObject().put("apiGroup", members.group()).put("kind", "Member")
        .putArray("names");
    claimed.forEach(i -> names.add(member(parent.getMetadata().getName(), i)));
    client.genericKubernetesResources("metacontroller.k8s.io/v1alpha1", "ControllerRevision")
        .inNamespace(cluster.namespace()).resource(client.getKubernetesSerialization()
            .unmarshal(KubeJson.mapper().writeValueAsString(revision), GenericKubernetesResource.class)).create();
    return name;
  }

  @Test
  void anEngineKilledHalfwayThroughARolloutResumesItWithoutSkippingTheGate(@TempDir Path dir) {
    engine.close(); // this test runs the jar, as a process it can kill
    String id = "killed-" + UUID.randomUUID().toString().substring(0, 8);
    String yaml = controllerYaml("roll-" + id, "RollingInPlace", "");
    GenericKubernetesResource controller = client.getKubernetesSerialization()
        .unmarshal(yaml, GenericKubernetesResource.class);
    controller.getMetadata().setLabels(Map.of(EngineUnderTest.HOSTED_BY, id));
    cluster.deleteAfterTest(client.genericKubernetesResources("metacontroller.k8s.io/v1alpha1", "CompositeController")
        .resource(controller).create());
    String[] flags = {"--kubeconfig=" + cluster.kubeconfig(), "--metrics-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0", "--discovery-interval=500ms",
        "--target-label-selector=" + EngineUnderTest.HOSTED_BY + "=" + id};
    Map<String, String> before;
    try (EngineProcess first = EngineProcess.start(dir.resolve("first.log"), flags)) {
      converged("app", "a");
      before = uids();
      setImage("app", "b");
      await().atMost(TIMEOUT).until(() -> waitingOn("app", member("app", 0), "hasn't observed latest spec"));
      markReady(member("app", 0));
      await().atMost(TIMEOUT).until(() -> waitingOn("app", member("app", 1), "hasn't observed latest spec"));
      markReady(member("app", 1));
      first.close(); // SIGKILL, racing the move of the third member
    }
    try (EngineProcess second = EngineProcess.start(dir.resolve("second.log"), flags)) {
      await().atMost(TIMEOUT).until(() -> waitingOn("app", member("app", 2), "hasn't observed latest spec"));
      assertThat(images("app")).isEqualTo(List.of("b", "b", "b", "a", "a"));
      markReady(member("app", 2));
      await().atMost(TIMEOUT).until(() -> waitingOn("app", member("app", 3), "hasn't observed latest spec"));
      assertThat(images("app")).isEqualTo(List.of("b", "b", "b", "b", "a"));
      markReady(member("app", 3));
      await().atMost(TIMEOUT).until(() -> onLatest("app"));
      assertThat(images("app")).containsOnly("b");
      assertThat(uids()).as("no member created twice").isEqualTo(before);
      await().atMost(TIMEOUT).until(() -> revisionNames().size() == 1);
      assertThat(second.output()).doesNotContain("\"level\":\"error\"");
    }
  }
}
