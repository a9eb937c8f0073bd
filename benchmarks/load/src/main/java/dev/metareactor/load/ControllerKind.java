package dev.metareactor.load;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The controller a run measures ({@code --controller}): its controller object, the hook path it calls and what one
 * unit of the workload is. For CompositeController and DecoratorController a unit is a bench parent; for
 * MapController it is one input ConfigMap of a single parent, so that {@code --parents N} means N inputs and every
 * phase (create, edit, trickle, the convergence check, the hook's count of what it saw) works on inputs instead.
 */
enum ControllerKind {

  COMPOSITE(Cluster.COMPOSITE_CONTROLLERS, "/sync", "parent", "sync", """
      generateSelector: true
      parentResource:
        apiVersion: bench.metareactor.dev/v1
        resource: loadparents
      childResources:
      """ + Constants.CONFIGMAPS),

  DECORATOR(Cluster.DECORATOR_CONTROLLERS, "/decorate", "parent", "sync", """
      resources:
      - apiVersion: bench.metareactor.dev/v1
        resource: loadparents
      attachments:
      """ + Constants.CONFIGMAPS),

  // The inputs are ConfigMaps labelled bench.metareactor.dev/load=input, which the parent's spec.selector (set by
  // loadkit create --map) selects; the outputs, labelled =true like every other variant's children, are not inputs.
  MAP(Cluster.MAP_CONTROLLERS, "/map", "input", "map", """
      parentResource:
        apiVersion: bench.metareactor.dev/v1
        resource: loadparents
      inputResources:
      - apiVersion: v1
        resource: configmaps
      outputResources:
      """ + Constants.CONFIGMAPS);

  /** Enum constants cannot refer to the enum's own static fields, but to another class's. */
  private static final class Constants {
    /** What every variant makes: ConfigMaps, updated in place. */
    static final String CONFIGMAPS = """
        - apiVersion: v1
          resource: configmaps
          updateStrategy: {method: InPlace}
        """;
  }

  private final ResourceDefinitionContext type;
  private final String hookPath;
  private final String unit;
  private final String hook;
  private final String spec;

  /**
   * @param hook the hook's name in {@code spec.hooks}
   * @param spec the controller object's spec but its hooks, as YAML
   */
  ControllerKind(ResourceDefinitionContext type, String hookPath, String unit, String hook, String spec) {
    this.type = type;
    this.hookPath = hookPath;
    this.unit = unit;
    this.hook = hook;
    this.spec = spec;
  }
  /** {@code composite}, {@code decorator} or {@code map}. */
  static ControllerKind of(String name) {
    return Arrays.stream(values()).filter(kind -> kind.flag().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("--controller: composite, decorator or map, not " + name));
  }

  String flag() {
    return name().toLowerCase(Locale.ROOT);
  }

  ResourceDefinitionContext type() {
    return type;
  }

  /** What one unit of {@code --parents} is: {@code parent} or {@code input}. */
  String unit() {
    return unit;
  }

  String units() {
    return unit + "s";
  }

  /** Whether the kind has a customize hook (relating parents to other objects); a MapController has none. */
  boolean customizes() {
    return this != MAP;
  }

  /**
   * The controller object as YAML, the same for every engine, calling the hook at {@code hookBase}.
   *
   * @param syncHook whether its sync hook is the Go webhook or the same answer in CEL ({@link CelSync}, a
   *     CompositeController's only), for parents of {@code children} ConfigMaps
   * @param shadow whether the same hook is also its shadow ({@code metareactor.dev/shadow-<hook>-url}, which
   *     upstream ignores): what comparing every answer with a shadow's costs
   * @param resyncSeconds its {@code resyncPeriodSeconds}, or 0 for none (each engine's default)
   * @param customize whether it calls the hook's {@code /customize} (which relates a parent to the shared
   *     ConfigMap its spec names)
   */
  String controllerObject(String hookBase, HookKind syncHook, int children, boolean shadow, int resyncSeconds,
      boolean customize) {
    if (customize && !customizes()) {
      throw new IllegalArgumentException("a " + type.getKind() + " has no customize hook");
    }
    if (syncHook == HookKind.CEL && this != COMPOSITE) {
      throw new IllegalArgumentException("a " + type.getKind() + " has no CEL sync hook here");
    }
    String url = hookBase + hookPath;
    String answer = syncHook == HookKind.CEL
        ? "cel:\n  expression: |\n" + CelSync.expression(children).indent(4)
        : "webhook: {url: \"" + url + "\"}\n";
    String resync = resyncSeconds > 0 ? "resyncPeriodSeconds: " + resyncSeconds + "\n" : "";
    String customizeHook = customize ? "customize:\n  webhook: {url: \"" + hookBase + "/customize\"}\n" : "";
    return """
        apiVersion: metacontroller.k8s.io/v1alpha1
        kind: %s
        metadata:
          name: load-bench
          labels: {"bench.metareactor.dev/load": "true"}
          annotations: {%s}
        spec:
        %s%s  hooks:
            %s:
        %s%s""".formatted(type.getKind(), shadow ? "\"metareactor.dev/shadow-" + hook + "-url\": \"" + url + "\"" : "",
        spec.indent(2), resync.indent(2), hook, answer.indent(6), customizeHook.indent(4));
  }

  /** What {@code loadkit create}, {@code edit} and {@code trickle} need to work on this kind's units. */
  List<String> writerFlags() {
    return this == MAP ? List.of("--map") : List.of();
  }
}
