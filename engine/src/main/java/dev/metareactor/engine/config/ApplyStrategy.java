package dev.metareactor.engine.config;

import java.util.Arrays;
import java.util.stream.Collectors;

/** How the engine writes children: {@code --apply-strategy}, with Metacontroller's names. */
public enum ApplyStrategy {
  /** Client-side three-way merge with the last-applied annotation (the default, as upstream). */
  DYNAMIC_APPLY("dynamic-apply"),
  /** Kubernetes server-side apply with the field manager of {@code --apply-strategy-ssa-field-manager}. */
  SERVER_SIDE_APPLY("server-side-apply");

  private final String flagValue;

  ApplyStrategy(String flagValue) {
    this.flagValue = flagValue;
  }

  public String flagValue() {
    return flagValue;
  }

  /** Parses the flag value; an empty value means the default, as upstream. */
  public static ApplyStrategy parse(String value) {
    if (value == null || value.isBlank()) {
      return DYNAMIC_APPLY;
    }
    for (ApplyStrategy strategy : values()) {
      if (strategy.flagValue.equals(value.strip())) {
        return strategy;
      }
    }
    throw new IllegalArgumentException("unknown apply strategy: " + value + " (expected one of "
        + Arrays.stream(values()).map(ApplyStrategy::flagValue).collect(Collectors.joining(", ")) + ")");
  }

  @Override
  public String toString() {
    return flagValue;
  }
}
