package dev.metareactor.engine.hook;

/**
 * A hook answered, but with something the engine cannot use: not a JSON object, a field of the wrong type, a
 * child without a kind or name, an unknown field in strict mode. Nothing of that response is applied.
 */
public final class HookResponseException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public HookResponseException(String message) {
    super(message);
  }
}
