package dev.metareactor.apply;

/**
 * The inputs cannot be applied: an object that is not a JSON object, or a last-applied annotation that is not
 * valid JSON. The message names the problem so the engine can put it in a {@code SyncError} event.
 */
public final class ApplyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ApplyException(String message) {
    super(message);
  }

  public ApplyException(String message, Throwable cause) {
    super(message, cause);
  }
}
