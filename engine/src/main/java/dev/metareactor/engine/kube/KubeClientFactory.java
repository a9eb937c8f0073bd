package dev.metareactor.engine.kube;

import dev.metareactor.engine.config.EngineOptions;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.File;

/**
 * Builds the one {@link KubernetesClient} the process uses, from {@code --kubeconfig} or, without it, the
 * in-cluster service account (falling back to {@code KUBECONFIG} and {@code ~/.kube/config} outside a cluster).
 */
public final class KubeClientFactory {

  private KubeClientFactory() {}

  public static KubernetesClient create(EngineOptions options) {
    Config config = options.kubeconfig().isBlank()
        ? Config.autoConfigure(null)
        : Config.fromKubeconfig(new File(options.kubeconfig()));
    // The engine limits request rate and concurrency itself (ApiWriter); let the transport carry that many
    // requests plus the long-running watches.
    int inFlight = options.apiConcurrency() + 64;
    config.setMaxConcurrentRequests(inFlight);
    config.setMaxConcurrentRequestsPerHost(inFlight);
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
