package dev.metareactor.engine.faults;

import dev.metareactor.engine.kube.KubeJson;
import dev.metareactor.testing.k8s.LocalCluster;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A validating admission webhook on loopback that guards ConfigMaps labelled {@value #LABEL}{@code =yes} in one
 * namespace: it denies the creation or change of one whose name starts with {@value #DENIED}, never answers for one
 * whose name starts with {@value #SLOW} (the API server gives up after {@value #TIMEOUT_SECONDS} s), and allows the
 * rest. Installed as a {@code ValidatingWebhookConfiguration} with {@code failurePolicy: Fail}.
 */
final class AdmissionGuard implements AutoCloseable {

  static final String LABEL = "guarded";
  static final String DENIED = "denied-";
  static final String SLOW = "slow-";
  static final String REASON = "guarded ConfigMaps are frozen for maintenance";
  static final int TIMEOUT_SECONDS = 2;

  private final LoopbackHttps server = new LoopbackHttps(this::review).start();
  private final LocalCluster cluster;
  private final String name;
  /** Reviews asked for, by verdict. */
  final AtomicInteger denied = new AtomicInteger();
  final AtomicInteger hung = new AtomicInteger();
  final AtomicInteger allowed = new AtomicInteger();

  /** @param name the ValidatingWebhookConfiguration's name */
  AdmissionGuard(LocalCluster cluster, String name) {
    this.cluster = cluster;
    this.name = name;
  }

  /** Registers the webhook with the API server. */
  void install() {
    cluster.kubectlWithInput("""
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingWebhookConfiguration
        metadata: {name: %1$s}
        webhooks:
        - name: guard.faults.metareactor.dev
          clientConfig: {url: "%2$s", caBundle: %3$s}
          rules:
          - {operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}
          namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %4$s}}
          objectSelector: {matchLabels: {%5$s: "yes"}}
          failurePolicy: Fail
          sideEffects: None
          admissionReviewVersions: [v1]
          timeoutSeconds: %6$d
        """.formatted(name, server.url("/validate"), LoopbackHttps.caBundle(), cluster.namespace(), LABEL,
        TIMEOUT_SECONDS), "apply", "-f", "-").orThrow();
  }

  /** Unregisters it: writes are no longer reviewed. */
  void remove() {
    cluster.kubectl("delete", "validatingwebhookconfiguration", name, "--ignore-not-found").orThrow();
  }

  private Publisher<Void> review(HttpServerRequest request, HttpServerResponse response) {
    return request.receive().aggregate().asByteArray().flatMap(body -> {
      JsonNode review = KubeJson.mapper().readTree(body).path("request");
      String object = review.path("name").asString("");
      if (object.startsWith(SLOW)) {
        hung.incrementAndGet();
        return Mono.never();
      }
      ObjectNode answer = KubeJson.nodes().objectNode().put("apiVersion", "admission.k8s.io/v1")
          .put("kind", "AdmissionReview");
      ObjectNode verdict = answer.putObject("response").put("uid", review.path("uid").asString(""));
      if (object.startsWith(DENIED)) {
        denied.incrementAndGet();
        verdict.put("allowed", false).putObject("status").put("code", 403).put("message", REASON);
      } else {
        allowed.incrementAndGet();
        verdict.put("allowed", true);
      }
      return LoopbackHttps.json(response, 200, answer.toString());
    });
  }

  @Override
  public void close() {
    remove();
    server.close();
  }
}
