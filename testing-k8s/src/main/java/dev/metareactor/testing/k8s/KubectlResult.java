package dev.metareactor.testing.k8s;

import java.util.List;

/** Outcome of one kubectl run by {@link LocalCluster#kubectl(String...)}. */
public record KubectlResult(List<String> command, int exitCode, String stdout, String stderr) {

  public boolean succeeded() {
    return exitCode == 0;
  }

  /** Returns stdout, or throws with the whole outcome when kubectl exited non-zero. */
  public String orThrow() {
    if (exitCode != 0) {
      throw new IllegalStateException(this.toString());
    }
    return stdout;
  }

  @Override
  public String toString() {
    return String.join(" ", command) + " -> exit " + exitCode + "\n--- stdout ---\n" + stdout
        + "\n--- stderr ---\n" + stderr;
  }
}
