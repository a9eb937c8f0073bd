package dev.metareactor.http;

import org.jspecify.annotations.Nullable;

/**
 * A webhook block that cannot be called: no usable URL, a service without name or namespace, a timeout that is not a
 * Go duration, bad TLS or auth materials. The message starts with {@code invalid webhook config:} like upstream's.
 */
public final class InvalidWebhookException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidWebhookException(String detail) {
    super("invalid webhook config: " + detail);
  }

  public InvalidWebhookException(@Nullable String detail, Throwable cause) {
    super("invalid webhook config: " + detail, cause);
  }
}
