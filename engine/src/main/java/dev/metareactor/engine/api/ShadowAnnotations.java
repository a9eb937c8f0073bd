package dev.metareactor.engine.api;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code metareactor.dev/shadow-<hook>-url} on a controller object ({@code shadow-sync-url},
 * {@code shadow-finalize-url}, {@code shadow-map-url}): every request of a real sync to that hook is also sent to the
 * URL, whose answer goes through the same checks, is never written, and is compared with the real answer (see
 * {@code controller/Shadow}). A change of an annotation restarts the controller, as a change of its spec does.
 */
public final class ShadowAnnotations {

  /** The prefix of the annotations' keys. */
  public static final String PREFIX = "metareactor.dev/shadow-";
  /** The hooks a shadow can stand beside. */
  public static final List<String> HOOKS = List.of("sync", "finalize", "map");

  private ShadowAnnotations() {}

  /** The annotation's key for {@code hook}: {@code metareactor.dev/shadow-sync-url}. */
  public static String key(String hook) {
    return PREFIX + hook + "-url";
  }

  /**
   * The shadow URLs the object's annotations give, by hook name.
   *
   * @throws InvalidControllerException naming the annotation when its value is not an absolute http or https URL
   */
  public static Map<String, String> urls(Map<String, String> annotations) {
    Map<String, String> urls = new LinkedHashMap<>();
    for (String hook : HOOKS) {
      String value = annotations.get(key(hook));
      if (value == null) {
        continue;
      }
      String url = value.strip();
      try {
        URI uri = new URI(url);
        if (!uri.isAbsolute() || uri.getHost() == null
            || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))) {
          throw new URISyntaxException(url, "not an absolute http or https URL");
        }
      } catch (URISyntaxException e) {
        throw new InvalidControllerException("metadata.annotations[" + key(hook) + "]: " + e.getMessage());
      }
      urls.put(hook, url);
    }
    return urls;
  }
}
