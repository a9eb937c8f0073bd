package dev.metareactor.engine.controller.composite;

import static dev.metareactor.engine.it.EngineUnderTest.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.it.ParentCrd;
import dev.metareactor.http.HookServer;
import dev.metareactor.testing.k8s.KubectlResult;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.util.RawValue;

/**
 * Numbers in child bodies reach the API server as Metacontroller's Go client writes them. A hook in a language
 * that prints whole floats as {@code 2.0} (Python's {@code json.dumps(2.0)}) or with an exponent works under
 * Metacontroller, which decodes the answer and writes {@code 2}; a typed field such as a Deployment's
 * {@code spec.replicas} (int32) rejects the literal itself.
 */
class CompositeNumbersIT extends CompositeTestBase {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Test
  void theApiServerRejectsAWholeFloatInAnInt32Field() {
    for (String replicas : List.of("3.0", "1E+0")) {
      KubectlResult created = cluster.kubectlWithInput(JSON.writeValueAsString(deployment("raw", replicas)),
          "create", "--raw", "/apis/apps/v1/namespaces/" + cluster.namespace() + "/deployments", "-f", "-");
      assertThat(created.succeeded()).as("%s", created).isFalse();
      assertThat(created.stderr()).contains("cannot unmarshal number " + replicas);
    }
  }

  @Test
  void aDeploymentChildWithFloatReplicasIsCreatedAndUpdated() {
    parents = ParentCrd.create(cluster, "Replicated");
    AtomicInteger calls = new AtomicInteger();
    // The parent's spec.value is the replicas literal, written into the answer as is.
    try (HookServer floats = HookServer.builder().route("/sync", request -> {
      calls.incrementAndGet();
      String parent = request.path("parent").path("metadata").path("name").asString();
      ObjectNode answer = JsonNodeFactory.instance.objectNode();
      answer.putObject("status");
      answer.putArray("children")
          .add(deployment(parent + "-web", request.path("parent").path("spec").path("value").asString()));
      return answer;
    }).start()) {
      // The tests' controller, with Deployment children instead of ConfigMaps and a resync every second.
      engine.createController(controllerYaml("cc-replicated", parents, "InPlace", floats.url("/sync"),
          "  resyncPeriodSeconds: 1\n").replace("- apiVersion: v1\n    resource: configmaps\n",
          "- apiVersion: apps/v1\n    resource: deployments\n"));

      createParent("floats", List.of(), "2.0");
      Deployment created = awaitReplicas("floats-web", 2);
      assertThat(created.getSpec().getRevisionHistoryLimit()).isEqualTo(5);

      setSpec("floats", List.of(), "3E+0");
      Deployment updated = awaitReplicas("floats-web", 3);
      assertThat(updated.getMetadata().getUid()).isEqualTo(created.getMetadata().getUid());

      // Resyncs answer 3E+0 over the stored 3: no change, so no further update.
      int seen = calls.get();
      await().atMost(TIMEOUT).until(() -> calls.get() >= seen + 3);
      assertThat(engine.apiRequests(counter -> "update".equals(counter.getId().getTag("verb"))
          && "deployments.apps".equals(counter.getId().getTag("resource"))
          && "2xx".equals(counter.getId().getTag("code")))).isEqualTo(1.0);
      assertThat(engine.eventsAbout(cluster.namespace(), "floats"))
          .noneMatch(event -> event.getReason().equals("SyncError"));
    }
  }

  private Deployment awaitReplicas(String name, int replicas) {
    return await().atMost(TIMEOUT).until(() -> client.apps().deployments().withName(name).get(),
        deployment -> deployment != null && deployment.getSpec().getReplicas() == replicas);
  }

  /** A Deployment with {@code replicas} as a raw JSON literal and {@code revisionHistoryLimit} {@code 5.0}. */
  private static ObjectNode deployment(String name, String replicas) {
    ObjectNode deployment = JsonNodeFactory.instance.objectNode().put("apiVersion", "apps/v1")
        .put("kind", "Deployment");
    deployment.putObject("metadata").put("name", name);
    ObjectNode spec = deployment.putObject("spec");
    spec.putRawValue("replicas", new RawValue(replicas));
    spec.putRawValue("revisionHistoryLimit", new RawValue("5.0"));
    spec.putObject("selector").putObject("matchLabels").put("app", name);
    ObjectNode template = spec.putObject("template");
    template.putObject("metadata").putObject("labels").put("app", name);
    template.putObject("spec").putArray("containers").addObject().put("name", "web").put("image", "nginx");
    return deployment;
  }
}
