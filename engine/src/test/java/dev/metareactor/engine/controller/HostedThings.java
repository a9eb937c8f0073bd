package dev.metareactor.engine.controller;

import static dev.metareactor.engine.testing.ObjectEvents.added;
import static org.awaitility.Awaitility.await;

import dev.metareactor.engine.controller.composite.CompositeController;
import dev.metareactor.engine.host.ControllerContext;
import dev.metareactor.engine.host.HostedController;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.testing.FakeInformers;
import java.util.Set;
import tools.jackson.databind.node.ObjectNode;

/**
 * The hosted CompositeController {@code things} of the middle-tier tests that run a whole controller: parents
 * {@code things.test.metareactor.dev} (with a status subresource), ConfigMap children, one sync hook.
 */
final class HostedThings {

  static final ApiResource THINGS =
      new ApiResource("test.metareactor.dev", "v1", "things", "Thing", true, Set.of("status"));
  static final ApiResource CONFIG_MAPS = new ApiResource("", "v1", "configmaps", "ConfigMap", true, Set.of());

  private HostedThings() {}

  /** The controller, started in {@code context} with its sync hook at {@code hookUrl}, once it runs. */
  static HostedController started(ControllerContext context, String hookUrl) {
    HostedController controller = CompositeController.kind().factory().create(KubeObject.of((ObjectNode) KubeJson
        .mapper().readTree("""
            {"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
             "metadata": {"name": "things", "uid": "controller-uid"},
             "spec": {"generateSelector": true,
                      "parentResource": {"apiVersion": "test.metareactor.dev/v1", "resource": "things"},
                      "childResources": [{"apiVersion": "v1", "resource": "configmaps"}],
                      "hooks": {"sync": {"webhook": {"url": "%s"}}}}}""".formatted(hookUrl))), context);
    controller.start().subscribe();
    await().until(() -> controller.phase() == HostedController.Phase.RUNNING);
    return controller;
  }

  /** Caches parent {@code team/a} and tells the controller it was added. */
  static void addParent(FakeInformers informers) {
    KubeObject parent = KubeObject.of((ObjectNode) KubeJson.mapper().readTree("""
        {"apiVersion": "test.metareactor.dev/v1", "kind": "Thing",
         "metadata": {"name": "a", "namespace": "team", "uid": "a-uid", "generation": 1, "resourceVersion": "7"},
         "spec": {}}"""));
    informers.of(THINGS).put(parent).deliver(added(parent));
  }
}
