package dev.metareactor.engine.kube;

import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks at startup that the API server answers, retrying a few times as Metacontroller does (6 attempts, 5 s
 * apart), so a pod that starts before the network is ready does not crash-loop at once.
 */
public final class ApiServerCheck {

  private static final Logger LOG = LoggerFactory.getLogger(ApiServerCheck.class);

  private final int attempts;
  private final Duration pause;

  public ApiServerCheck(int attempts, Duration pause) {
    if (attempts < 1) {
      throw new IllegalArgumentException("attempts must be at least 1");
    }
    this.attempts = attempts;
    this.pause = pause;
  }

  /** Metacontroller's schedule: 6 attempts, 5 seconds apart. */
  public static ApiServerCheck standard() {
    return new ApiServerCheck(6, Duration.ofSeconds(5));
  }

  /**
   * Blocks until {@code GET /version} answers.
   *
   * @return the server's {@code gitVersion}
   * @throws IllegalStateException when every attempt failed, carrying the last failure
   */
  public String await(KubeApi api) {
    RuntimeException last = null;
    for (int attempt = 1; attempt <= attempts; attempt++) {
      try {
        byte[] body = api.send("GET", "/version", null, null).block(api.config().requestTimeout());
        String version = KubeJson.mapper().readTree(body).path("gitVersion").asString("unknown");
        LOG.info("Communication with K8s API server successful (version {}, {})", version, api.config().server());
        return version;
      } catch (RuntimeException e) {
        last = e;
        LOG.warn("Communication with K8s API server failed. Retrying... ({}/{}: {})", attempt, attempts,
            e.getMessage());
        if (attempt < attempts) {
          sleep();
        }
      }
    }
    throw new IllegalStateException("the Kubernetes API server at " + api.config().server()
        + " did not answer after " + attempts + " attempts: "
        + Objects.requireNonNull(last, "attempts is at least 1").getMessage(), last);
  }

  private void sleep() {
    try {
      Thread.sleep(pause.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the API server", e);
    }
  }
}
