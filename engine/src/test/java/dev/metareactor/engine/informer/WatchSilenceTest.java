package dev.metareactor.engine.informer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

class WatchSilenceTest {

  private static final Duration ALLOWED = Duration.ofMinutes(3);

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  private final AtomicBoolean ended = new AtomicBoolean();

  @AfterEach
  void stopClock() {
    clock.dispose();
  }

  private Disposable watch(WatchSilence silence) {
    return silence.ended().subscribe(tick -> ended.set(true));
  }

  @Test
  void aWatchWithoutALineEndsOnceTheAllowedTimeHasPassed() {
    watch(new WatchSilence(clock, ALLOWED));

    clock.advanceTimeBy(ALLOWED.minusNanos(1));
    assertThat(ended).isFalse();
    clock.advanceTimeBy(Duration.ofNanos(1));
    assertThat(ended).isTrue();
  }

  @Test
  void eachLineStartsTheSilenceAgain() {
    WatchSilence silence = new WatchSilence(clock, ALLOWED);
    watch(silence);

    clock.advanceTimeBy(Duration.ofMinutes(2));
    silence.heard();
    clock.advanceTimeBy(Duration.ofMinutes(2));
    silence.heard();
    // Four minutes since the watch began, but only one since its last line; the first timer has fired meanwhile.
    clock.advanceTimeBy(ALLOWED.minusSeconds(1));
    assertThat(ended).as("2 min 59 s after the last line").isFalse();
    clock.advanceTimeBy(Duration.ofSeconds(1));
    assertThat(ended).isTrue();
  }

  @Test
  void aSilenceCancelledWithItsWatchNeverSignals() {
    Disposable watching = watch(new WatchSilence(clock, ALLOWED));

    watching.dispose();
    clock.advanceTimeBy(ALLOWED.multipliedBy(2));
    assertThat(ended).isFalse();
  }
}
