package dev.metareactor.engine.testing;

import dev.metareactor.engine.kube.KubeApi;
import dev.metareactor.engine.kube.KubeConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A connection to a stand-in API server on loopback (a Reactor Netty server a unit test scripts), made as the engine
 * makes one: through a kubeconfig.
 */
public final class StandInApi {

  private StandInApi() {}

  /**
   * A {@link KubeApi} for {@code http://127.0.0.1:<port>}.
   *
   * @param user the kubeconfig's user, as flow YAML ({@code {}} for none, {@code {tokenFile: /path}})
   * @param connections requests in flight at once
   */
  public static KubeApi connect(int port, String user, int connections) {
    try {
      Path kubeconfig = Files.createTempFile("stand-in", ".kubeconfig");
      kubeconfig.toFile().deleteOnExit();
      Files.writeString(kubeconfig, "apiVersion: v1\nkind: Config\ncurrent-context: stand-in\n"
          + "clusters:\n- name: stand-in\n  cluster: {server: 'http://127.0.0.1:" + port + "'}\n"
          + "users:\n- name: stand-in\n  user: " + user + "\n"
          + "contexts:\n- name: stand-in\n  context: {cluster: stand-in, user: stand-in}\n");
      return new KubeApi(KubeConfig.load(kubeconfig.toString()), connections);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
