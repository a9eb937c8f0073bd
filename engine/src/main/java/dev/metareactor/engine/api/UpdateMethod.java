package dev.metareactor.engine.api;

import org.jspecify.annotations.Nullable;

/** {@code updateStrategy.method} of a child or attachment rule. */
public enum UpdateMethod {
  /** Never update an existing child; a deleted one is re-created with the new state (the default). */
  ON_DELETE("OnDelete"),
  /** Delete a changed child now; the next sync creates it again. */
  RECREATE("Recreate"),
  /** Update a changed child in place. */
  IN_PLACE("InPlace"),
  /** Recreate, one child at a time across ControllerRevisions. */
  ROLLING_RECREATE("RollingRecreate"),
  /** In place, one child at a time across ControllerRevisions. */
  ROLLING_IN_PLACE("RollingInPlace");

  private final String apiName;

  UpdateMethod(String apiName) {
    this.apiName = apiName;
  }

  public String apiName() {
    return apiName;
  }

  public boolean rolling() {
    return this == ROLLING_RECREATE || this == ROLLING_IN_PLACE;
  }

  /** Whether a changed child is updated in place ({@code InPlace} or {@code RollingInPlace}). */
  public boolean inPlace() {
    return this == IN_PLACE || this == ROLLING_IN_PLACE;
  }

  /** Whether a changed child is deleted to be created again ({@code Recreate} or {@code RollingRecreate}). */
  public boolean recreate() {
    return this == RECREATE || this == ROLLING_RECREATE;
  }

  /**
   * Parses the API value; absent or empty means {@code OnDelete}.
   *
   * @throws InvalidControllerException for an unknown method, naming {@code field}
   */
  public static UpdateMethod parse(@Nullable String value, String field) {
    if (value == null || value.isEmpty()) {
      return ON_DELETE;
    }
    for (UpdateMethod method : values()) {
      if (method.apiName.equals(value)) {
        return method;
      }
    }
    throw new InvalidControllerException(field + ": unknown update method \"" + value
        + "\" (expected OnDelete, Recreate, InPlace, RollingRecreate or RollingInPlace)");
  }

  @Override
  public String toString() {
    return apiName;
  }
}
