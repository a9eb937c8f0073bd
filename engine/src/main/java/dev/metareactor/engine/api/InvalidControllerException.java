package dev.metareactor.engine.api;

/** A controller object that cannot be hosted as written; the message names the field and the problem. */
public final class InvalidControllerException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public InvalidControllerException(String message) {
    super(message);
  }
}
