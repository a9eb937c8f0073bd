package dev.metareactor.engine.config;

import java.util.Objects;

/**
 * Where a server listens, in the Go notation Metacontroller's flags use: {@code :9999} (all interfaces),
 * {@code 127.0.0.1:8081}, {@code [::1]:8081}, or {@code 0} to disable the server.
 *
 * @param host the interface to bind, empty for all interfaces
 * @param port the port; 0 with {@code enabled} lets the system pick one (useful in tests)
 * @param enabled false when the flag said {@code 0}
 */
public record ListenAddress(String host, int port, boolean enabled) {

  public ListenAddress {
    Objects.requireNonNull(host, "host");
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
  }

  /** The value that turns a server off. */
  public static ListenAddress disabled() {
    return new ListenAddress("", 0, false);
  }

  /**
   * Parses a flag value.
   *
   * @throws IllegalArgumentException with a message naming the value when it is not {@code 0} or
   *     {@code [host]:port}
   */
  public static ListenAddress parse(String value) {
    Objects.requireNonNull(value, "value");
    String text = value.strip();
    if (text.equals("0")) {
      return disabled();
    }
    int colon = text.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("'" + value + "' is not an address: expected [host]:port, or 0 to disable");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("'" + value + "' has no valid port");
    }
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("'" + value + "' has a port out of range");
    }
    return new ListenAddress(host, port, true);
  }

  /** The host to bind: all interfaces when none was given. */
  public String bindHost() {
    return host.isEmpty() ? "0.0.0.0" : host;
  }

  @Override
  public String toString() {
    if (!enabled) {
      return "0";
    }
    return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }
}
