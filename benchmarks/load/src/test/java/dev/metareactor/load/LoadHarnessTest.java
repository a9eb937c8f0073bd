package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LoadHarnessTest {

  @Test
  void aStoppedHarnessStopsWhatItStartedEvenWhatIgnoresSigterm() throws Exception {
    Process polite = new ProcessBuilder("sleep", "300").start();
    Process stubborn = new ProcessBuilder("sh", "-c", "trap '' TERM; while true; do sleep 1; done").start();
    try {
      LoadHarness.stopChildren();

      assertThat(polite.waitFor(10, TimeUnit.SECONDS)).isTrue();
      assertThat(stubborn.waitFor(10, TimeUnit.SECONDS)).as("killed after the grace period").isTrue();
    } finally {
      polite.destroyForcibly();
      stubborn.destroyForcibly();
    }
  }
}
