package dev.metareactor.engine.kube;

import org.jspecify.annotations.Nullable;

/**
 * Whether this replica may change the cluster now. With {@code --leader-election} or {@code --sharding} a replica
 * acts only while it holds its lease, and "holds" is judged by its own clock at the moment of acting, not by the
 * last renewal loop's verdict: a process stopped (SIGSTOP, a frozen VM, a long GC pause) past its lease wakes up with
 * its timers, work queues and sockets exactly as they were, and whatever runs first would otherwise act for a lease
 * another replica may hold by now. {@link KubeApi} asks before it sends any request that is not a read, and a hosted
 * controller before each sync (so not even a hook is called); nothing is sent on a refusal.
 */
@FunctionalInterface
public interface WriteFence {

  /** No lease to hold: always open. */
  WriteFence OPEN = () -> null;

  /** Why this replica must not write now, or {@code null} when it may. Cheap and non-blocking, from any thread. */
  @Nullable String refusal();

  /** A request or sync this fence refused; nothing was sent. */
  final class Refused extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private static final int MAX_DEPTH = 16;

    public Refused(String what, String refusal) {
      super(what + " not sent: " + refusal, null, false, false);
    }

    /** Whether {@code error} is a refusal, or was caused by one or carries one among its suppressed errors. */
    public static boolean in(Throwable error) {
      return in(error, 0);
    }

    private static boolean in(@Nullable Throwable error, int depth) {
      if (error == null || depth > MAX_DEPTH) {
        return false;
      }
      if (error instanceof Refused) {
        return true;
      }
      for (Throwable suppressed : error.getSuppressed()) {
        if (in(suppressed, depth + 1)) {
          return true;
        }
      }
      return error.getCause() != error && in(error.getCause(), depth + 1);
    }
  }
}
