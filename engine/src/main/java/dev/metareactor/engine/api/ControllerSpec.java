package dev.metareactor.engine.api;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * What every kind of controller object declares the same way, whatever else its spec holds: its name, its hooks by
 * name, a resync period and the endpoint settings its webhooks share. Each kind's spec record implements it, so the
 * engine hosts every kind alike (see {@code controller/package-info.java} for adding one).
 */
public interface ControllerSpec {

  /** The controller object's kind: {@code CompositeController}, {@code DecoratorController}... */
  String kind();

  /** The controller object's {@code metadata.name}. */
  String name();

  /**
   * Every hook the kind declares, by name ({@code sync}, {@code finalize}, {@code customize}...) in the order it
   * declares them, each empty where the object has none.
   */
  Map<String, Optional<HookSpec>> hooksByName();

  /** {@code spec.resyncPeriodSeconds}, 0 when absent. */
  int resyncPeriodSeconds();

  /** {@code spec.endpointConfigs} as written (a missing node when absent). */
  JsonNode endpointConfigs();

  /**
   * The finalizer this controller puts on the objects it syncs while it has a finalize hook, as upstream names it:
   * {@code metacontroller.io/<kind in lower case>-<name>}.
   */
  default String finalizerName() {
    return "metacontroller.io/" + kind().toLowerCase(Locale.ROOT) + "-" + name();
  }

  /**
   * The spec of a kind whose hooks are Metacontroller's three: {@code sync}, {@code finalize} and {@code customize}
   * (CompositeController, DecoratorController).
   */
  interface WithSyncHooks extends ControllerSpec {

    Optional<HookSpec> syncHook();

    Optional<HookSpec> finalizeHook();

    Optional<HookSpec> customizeHook();

    @Override
    default Map<String, Optional<HookSpec>> hooksByName() {
      Map<String, Optional<HookSpec>> hooks = new LinkedHashMap<>();
      hooks.put("sync", syncHook());
      hooks.put("finalize", finalizeHook());
      hooks.put("customize", customizeHook());
      return hooks;
    }
  }
}
