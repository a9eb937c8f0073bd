package dev.metareactor.engine.hook;

import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.engine.cel.CelHookException;
import dev.metareactor.engine.cel.CelHookProgram;
import dev.metareactor.engine.cel.CelLimits;
import dev.metareactor.http.GoDuration;
import dev.metareactor.http.InvalidWebhookException;
import dev.metareactor.http.WebhookSpec;
import java.time.Duration;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * One hook of a controller object, checked: a {@link Webhook} (where, how long, ETags, and where its TLS material
 * and credentials come from) or a {@link Cel} expression, compiled.
 */
public sealed interface HookConfig {

  /** The hook as written (version and webhook or cel block). */
  HookSpec hook();

  /**
   * A webhook.
   *
   * @param webhook the webhook without its material
   * @param materials where the material comes from
   */
  record Webhook(HookSpec hook, WebhookSpec webhook, WebhookMaterials materials) implements HookConfig {}

  /** A CEL hook, compiled and type-checked. */
  record Cel(HookSpec hook, CelHookProgram program) implements HookConfig {}

  /**
   * Checks one of a controller object's hooks, if it has it.
   *
   * @param hookType {@code sync}, {@code finalize}, {@code customize}: the hook's name under {@code spec.hooks}
   */
  static Optional<HookConfig> of(Optional<HookSpec> hook, JsonNode endpointConfigs, String hookType) {
    return hook.map(spec -> spec.isCel() ? cel(spec, "spec.hooks." + hookType + ".cel")
        : webhook(spec, endpointConfigs, "spec.hooks." + hookType + ".webhook"));
  }

  /**
   * Checks a webhook of a controller object.
   *
   * @param endpointConfigs the object's {@code spec.endpointConfigs} (a missing node when absent)
   * @param field the hook's path in the object, for messages ({@code spec.hooks.sync.webhook})
   * @throws InvalidControllerException naming the field
   */
  static Webhook webhook(HookSpec hook, JsonNode endpointConfigs, String field) {
    WebhookSpec webhook;
    try {
      webhook = WebhookSpec.fromJson(hook.webhook());
    } catch (InvalidWebhookException e) {
      throw new InvalidControllerException(field + ": " + e.getMessage());
    }
    return new Webhook(hook, webhook, WebhookMaterials.of(hook.webhook(), endpointConfigs, webhook.endpoint(),
        field));
  }

  /**
   * Compiles a CEL hook: {@code expression} (required), {@code costLimit} (a positive whole number) and
   * {@code timeout} (a Go duration), the last two defaulting to {@link CelLimits#DEFAULT}.
   *
   * @param field the hook's path in the object, for messages ({@code spec.hooks.sync.cel})
   * @throws InvalidControllerException naming the field, and for a compile error the position in the expression
   */
  static Cel cel(HookSpec hook, String field) {
    JsonNode cel = hook.cel();
    JsonNode expression = cel.get("expression");
    if (expression == null || !expression.isString() || expression.stringValue().isBlank()) {
      throw new InvalidControllerException(field + ".expression: required, a CEL expression");
    }
    long costLimit = CelLimits.DEFAULT_COST_LIMIT;
    JsonNode cost = cel.get("costLimit");
    if (cost != null && !cost.isNull()) {
      if (!cost.isIntegralNumber() || !cost.canConvertToLong() || cost.longValue() < 1) {
        throw new InvalidControllerException(field + ".costLimit: must be a positive whole number");
      }
      costLimit = cost.longValue();
    }
    Duration timeout = CelLimits.DEFAULT_TIMEOUT;
    JsonNode timeoutText = cel.get("timeout");
    if (timeoutText != null && !timeoutText.isNull()) {
      try {
        timeout = GoDuration.parse(timeoutText.asString());
      } catch (IllegalArgumentException e) {
        throw new InvalidControllerException(field + ".timeout: " + e.getMessage());
      }
      if (timeout.isZero() || timeout.isNegative()) {
        throw new InvalidControllerException(field + ".timeout: must be positive");
      }
    }
    try {
      return new Cel(hook, CelHookProgram.compile(expression.stringValue(), new CelLimits(costLimit, timeout)));
    } catch (CelHookException e) {
      throw new InvalidControllerException(field + ".expression: " + e.getMessage());
    }
  }
}
