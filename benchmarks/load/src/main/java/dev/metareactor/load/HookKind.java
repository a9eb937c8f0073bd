package dev.metareactor.load;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * How the bench controller's sync hook answers ({@code --hook}): the compiled Go webhook ({@code loadkit hook}), or
 * a CEL expression the engine evaluates itself ({@link CelSync}: the same answer, with no hook process called). An
 * engine run under both is measured twice in one harness run, its CEL runs named {@code <engine>-cel}.
 */
enum HookKind {
  WEBHOOK,
  CEL;

  /**
   * The phases a CEL run can measure: the others count on the Go hook seeing every sync (the latency phase's edit to
   * hook call, the restart's every parent synced again).
   */
  static final Set<String> CEL_PHASES = Set.of("converge", "update", "idle");

  /** {@code webhook} or {@code cel}. */
  static HookKind of(String name) {
    return Arrays.stream(values()).filter(kind -> kind.flag().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("--hook: webhook or cel, not " + name));
  }

  String flag() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The engine's name in the results under this hook: as given for the webhook, {@code <engine>-cel} for CEL. */
  String engineName(String engine) {
    return this == WEBHOOK ? engine : engine + "-" + flag();
  }

  /**
   * Why a run with these settings cannot use this hook, or {@code null} when it can: a CEL run is a CompositeController
   * relating to nothing, measured in {@link #CEL_PHASES}.
   */
  String refusal(ControllerKind controller, int related, List<String> phases) {
    if (this == WEBHOOK) {
      return null;
    }
    if (controller != ControllerKind.COMPOSITE) {
      return "--hook cel: only a composite controller has a CEL sync hook here, not " + controller.flag();
    }
    if (related > 0) {
      return "--hook cel: the CEL sync hook answers as the Go hook does for parents relating to nothing; no --related";
    }
    List<String> others = phases.stream().filter(phase -> !CEL_PHASES.contains(phase)).toList();
    return others.isEmpty() ? null : "--hook cel: phases " + CEL_PHASES + " only (the others count the Go hook's"
        + " calls), not " + others;
  }
}
