package dev.metareactor.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Runs {@link SyncBenchmark}'s setup, which fails when a sync makes other requests than the benchmark claims (none
 * in the steady state, one update when a child changes), and each benchmark once: a change in the engine that breaks
 * a claim fails the build instead of a benchmark run much later.
 */
class SyncBenchmarkTest {

  @Test
  void eachSyncMakesTheRequestsItsBenchmarkClaims() {
    SyncBenchmark benchmark = new SyncBenchmark();
    benchmark.setUp();

    assertThat(benchmark.noOpSync()).isEmpty();
    assertThat(benchmark.oneChildChangedSync()).isEmpty();
    assertThat(benchmark.requestBytes).as("the hook saw a request").isPositive();
  }
}
