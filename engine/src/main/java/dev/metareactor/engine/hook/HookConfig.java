package dev.metareactor.engine.hook;

import dev.metareactor.engine.api.HookSpec;
import dev.metareactor.engine.api.InvalidControllerException;
import dev.metareactor.http.InvalidWebhookException;
import dev.metareactor.http.WebhookSpec;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * One hook of a controller object, checked: its webhook (where, how long, ETags) and where its TLS material and
 * credentials come from.
 *
 * @param hook the hook as written (version and webhook block)
 * @param webhook the webhook without its material
 * @param materials where the material comes from
 */
public record HookConfig(HookSpec hook, WebhookSpec webhook, WebhookMaterials materials) {

  /**
   * Checks one of a controller object's hooks, if it has it.
   *
   * @param hookType {@code sync}, {@code finalize}, {@code customize}: the hook's name under {@code spec.hooks}
   */
  public static Optional<HookConfig> of(Optional<HookSpec> hook, JsonNode endpointConfigs, String hookType) {
    return hook.map(spec -> of(spec, endpointConfigs, "spec.hooks." + hookType + ".webhook"));
  }

  /**
   * Checks a hook of a controller object.
   *
   * @param endpointConfigs the object's {@code spec.endpointConfigs} (a missing node when absent)
   * @param field the hook's path in the object, for messages ({@code spec.hooks.sync.webhook})
   * @throws InvalidControllerException naming the field
   */
  public static HookConfig of(HookSpec hook, JsonNode endpointConfigs, String field) {
    WebhookSpec webhook;
    try {
      webhook = WebhookSpec.fromJson(hook.webhook());
    } catch (InvalidWebhookException e) {
      throw new InvalidControllerException(field + ": " + e.getMessage());
    }
    return new HookConfig(hook, webhook, WebhookMaterials.of(hook.webhook(), endpointConfigs, webhook.endpoint(),
        field));
  }
}
