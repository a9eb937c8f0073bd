package dev.metareactor.http;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Which hook of which controller a {@link Hook} is: the labels of its metrics and the scope of its ETag cache.
 *
 * @param hookType {@code sync}, {@code finalize}, {@code customize} (or a new hook type); it becomes part of the
 *     metric names ({@code metacontroller_<hookType>_requests_total}), so it must be lower-case letters, digits and
 *     underscores
 * @param controllerName the controller object's name (label {@code controller_name})
 * @param controllerType {@code CompositeController}, {@code DecoratorController}, ... (label {@code controller_type})
 */
public record HookIdentity(String hookType, String controllerName, String controllerType) {

  private static final Pattern METRIC_NAME_PART = Pattern.compile("[a-z][a-z0-9_]*");

  public HookIdentity {
    Objects.requireNonNull(hookType, "hookType");
    Objects.requireNonNull(controllerName, "controllerName");
    Objects.requireNonNull(controllerType, "controllerType");
    if (!METRIC_NAME_PART.matcher(hookType).matches()) {
      throw new IllegalArgumentException("hookType '" + hookType + "' must match " + METRIC_NAME_PART);
    }
  }
}
