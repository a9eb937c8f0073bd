package dev.metareactor.load;

import java.util.List;
import java.util.Map;

/** What one harness run measured, written as {@code results.json}. */
final class Results {

  private Results() {}

  /**
   * One phase of one run.
   *
   * @param seconds how long the phase took (converge: process start to converged; update and latency: first edit
   *     to converged; idle: the idle time; fanout: first shared ConfigMap's edit until the last one's parents
   *     converged; restart: process start until the hook had seen every parent)
   * @param engineCpuSeconds the engine's user + system CPU during the phase
   * @param engineRssBytes the engine's resident memory at the end of the phase
   * @param hookCpuSeconds the hook server's CPU during the phase (to subtract, if one wants, from the machine's)
   * @param controlPlaneCpuSeconds etcd, kube-apiserver and kube-controller-manager CPU during the phase
   * @param machineBusySeconds CPU seconds the whole machine was busy during the phase (all cores)
   * @param requests the engine's API requests by verb and resource during the phase (see {@link RequestCounts})
   * @param extra phase-specific numbers (readiness, latency percentiles, edit time)
   */
  record Phase(String phase, double seconds, double engineCpuSeconds, long engineRssBytes, double hookCpuSeconds,
      long hookCalls, double controlPlaneCpuSeconds, double machineBusySeconds, Map<String, Long> requests,
      Map<String, Double> extra) {}

  /** One engine, one size, one repetition. */
  record Run(String engine, int parents, int children, int repetition, List<Phase> phases,
      List<ConvergenceWatch.Progress> convergeProgress, String error) {

    Phase phase(String name) {
      return phases.stream().filter(p -> p.phase().equals(name)).findFirst().orElse(null);
    }
  }

  /** The API server's raw create rate with a plain parallel client, per size. */
  record Ceiling(int parents, int objects, int concurrency, double seconds, double writesPerSecond) {}

  /**
   * The whole harness run.
   *
   * @param resyncSeconds the controller's {@code resyncPeriodSeconds} (0 or absent: none)
   * @param related the shared ConfigMaps the parents related to (0 or absent: none)
   */
  record Harness(String startedAt, String controller, int children, List<Integer> sizes, int repetitions,
      List<String> flags, Map<String, List<String>> engines, Map<String, String> machine, List<Ceiling> ceilings,
      List<Run> runs, Integer resyncSeconds, Integer related) {}
}
