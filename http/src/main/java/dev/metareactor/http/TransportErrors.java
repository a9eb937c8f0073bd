package dev.metareactor.http;

import dev.metareactor.http.HookCallException.Reason;
import io.netty.handler.timeout.ReadTimeoutException;
import java.io.IOException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;
import reactor.netty.http.client.PrematureCloseException;

/** Turns what Reactor Netty signals when a request gets no answer into a {@link HookCallException}. */
final class TransportErrors {

  private TransportErrors() {}

  static HookCallException classify(Throwable error) {
    if (error instanceof HookCallException failure) {
      return failure;
    }
    SSLException tls = find(error, SSLException.class);
    if (tls != null) {
      return new HookCallException(Reason.TLS, "tls error: " + tls.getMessage(), 0, false, error);
    }
    if (error instanceof ReadTimeoutException) {
      return new HookCallException(Reason.TRANSPORT, "http error: read timeout, the hook stopped answering", 0,
          true, error);
    }
    if (find(error, UnknownHostException.class) != null) {
      return new HookCallException(Reason.TRANSPORT, "http error: unknown host: " + error.getMessage(), 0, false,
          error);
    }
    if (error instanceof PrematureCloseException || find(error, IOException.class) != null) {
      return new HookCallException(Reason.TRANSPORT, "http error: " + error.getMessage(), 0, true, error);
    }
    // reactor-pool's exceptions live in a shaded internal package of Reactor Netty: matched by name, not imported.
    String type = error.getClass().getSimpleName();
    if (type.equals("PoolAcquirePendingLimitException") || type.equals("PoolAcquireTimeoutException")) {
      return new HookCallException(Reason.OVERLOADED, "too many calls waiting for a connection: "
          + error.getMessage(), 0, false, error);
    }
    return new HookCallException(Reason.TRANSPORT, "http error: " + error, 0, false, error);
  }

  private static <T extends Throwable> @Nullable T find(Throwable error, Class<T> type) {
    // Bounded: a cause chain can loop.
    Throwable t = error;
    for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }
}
