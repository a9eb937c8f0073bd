package dev.metareactor.engine.cel;

/**
 * A CEL hook that cannot be used as written (its expression does not compile, or does not make an object), or one of
 * its evaluations that failed (an error in the expression, an answer that is not JSON, over its cost limit or its
 * timeout). The message says what and, for a compile error, where ({@code line:column}).
 */
public final class CelHookException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CelHookException(String message) {
    super(message);
  }

  public CelHookException(String message, Throwable cause) {
    super(message, cause);
  }
}
