package dev.metareactor.testing.k8s;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers a test starts in another process (an engine's {@code /metrics}, a pod's debugger), chosen so
 * that nothing else takes them before that process binds them.
 *
 * <p>A port the kernel hands out for {@code bind(0)} lies in its ephemeral range (32768-60999 by default), which is
 * also where every outgoing connection gets its local port: between a test closing the probe socket and the engine's
 * JVM binding the port a second later, one of the hundreds of connections the suite's engines open to their API
 * servers can take it, and the engine fails to start ("Address already in use"; seen in CI). So {@link #free()} picks
 * from 10000-19999, below that range and beside {@code hack/local-cluster.sh}'s 20000-31999, where only servers bind.
 * A fixed port inside the ephemeral range (upstream's Delve port 40000) can be held by a connection for as long as
 * the connection lives: {@link #awaitFree} waits it out.
 */
public final class LoopbackPorts {

  private static final int FIRST = 10_000;
  private static final int COUNT = 10_000;
  private static final int ATTEMPTS = 200;

  private LoopbackPorts() {
  }

  /** A port from 10000-19999 that nothing listens on or is connected from now. */
  public static int free() {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      int port = FIRST + ThreadLocalRandom.current().nextInt(COUNT);
      if (bindable(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free port in " + FIRST + "-" + (FIRST + COUNT - 1) + " after " + ATTEMPTS
        + " tries");
  }

  /**
   * Waits up to {@code atMost} until {@code port} can be bound on all addresses, as the server that is about to
   * bind it will; fails naming the port if it cannot.
   */
  public static void awaitFree(int port, Duration atMost) {
    long end = System.nanoTime() + atMost.toNanos();
    while (!bindable(port)) {
      if (System.nanoTime() > end) {
        throw new IllegalStateException("port " + port + " is still in use after " + atMost.toSeconds() + " s");
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }

  private static boolean bindable(int port) {
    // The wildcard address with SO_REUSEADDR, as the servers started on these ports bind (Netty, the JVM's debugger
    // and Go's net.Listen all set it): taken while a socket listens on the port or a connection has it as its local
    // port; a connection of a server's earlier run waiting out TIME_WAIT does not count.
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
