package dev.metareactor.engine.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

class ResyncPacerTest {

  private static final Duration PERIOD = Duration.ofSeconds(30);

  private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
  /** Each add: the key and the virtual time it was added at (ms). */
  private final Map<String, List<Long>> added = new HashMap<>();
  private final List<String> keys = new CopyOnWriteArrayList<>(
      IntStream.range(0, 10_000).mapToObj(i -> "load-bench/p-%05d".formatted(i)).toList());
  private Disposable timer;

  @AfterEach
  void stop() {
    if (timer != null) {
      timer.dispose();
    }
    clock.dispose();
  }

  private void start() {
    timer = new ResyncPacer<String>(PERIOD, () -> keys,
        key -> added.computeIfAbsent(key, k -> new ArrayList<>()).add(clock.now(TimeUnit.MILLISECONDS)),
        clock).start();
  }

  @Test
  void everyKeyIsAddedOncePerPeriodTheFirstTimeOnePeriodAfterTheStart() {
    start();
    clock.advanceTimeBy(PERIOD.minusMillis(1));
    assertThat(added).isEmpty();

    clock.advanceTimeBy(PERIOD); // the whole first period, up to the second's first slot
    assertThat(added).hasSize(keys.size());
    assertThat(added.values()).allSatisfy(times -> assertThat(times).hasSize(1));

    clock.advanceTimeBy(PERIOD);
    assertThat(added.values()).allSatisfy(times -> assertThat(times).hasSize(2)
        .as("a key's resyncs are one period apart").satisfies(t -> assertThat(t.get(1) - t.get(0))
            .isEqualTo(PERIOD.toMillis())));
  }

  @Test
  void thePeriodsKeysAreSpreadEvenlyOverItsSlots() {
    start();
    clock.advanceTimeBy(PERIOD.multipliedBy(2).minusMillis(1));
    int slots = (int) (PERIOD.toMillis() / ResyncPacer.SLOT.toMillis());
    int[] perSlot = new int[slots];
    long slot = ResyncPacer.SLOT.toMillis();
    added.values().forEach(times -> perSlot[(int) ((times.get(0) - PERIOD.toMillis()) / slot)]++);
    int mean = keys.size() / slots; // 33
    // Not all 10,000 at once as a single timer added them: every slot has some, none more than twice the mean.
    assertThat(IntStream.of(perSlot).boxed().toList()).allSatisfy(n -> assertThat(n).isBetween(mean / 3, mean * 2));
  }

  @Test
  void eachPeriodReadsTheKeysAgain() {
    start();
    clock.advanceTimeBy(PERIOD.multipliedBy(2).minusMillis(1));
    keys.remove("load-bench/p-00007");
    keys.add("load-bench/new");
    clock.advanceTimeBy(PERIOD);
    assertThat(added.get("load-bench/p-00007")).hasSize(1);
    assertThat(added.get("load-bench/new")).hasSize(1);
    assertThat(added.get("load-bench/p-00008")).hasSize(2);
  }

  @Test
  void aFailedAddStopsNoLaterResync() {
    List<String> seen = new ArrayList<>();
    timer = new ResyncPacer<String>(Duration.ofSeconds(1), () -> List.of("a", "b", "c"), key -> {
      seen.add(key);
      throw new IllegalStateException("the queue refused " + key);
    }, clock).start();
    clock.advanceTimeBy(Duration.ofSeconds(3));
    assertThat(seen).hasSizeGreaterThanOrEqualTo(4).contains("a", "b", "c");
  }

  @Test
  void aLongPeriodHasLongerSlotsNotMoreOfThem() {
    Duration hour = Duration.ofHours(1);
    timer = new ResyncPacer<String>(hour, () -> keys,
        key -> added.computeIfAbsent(key, k -> new ArrayList<>()).add(clock.now(TimeUnit.MILLISECONDS)),
        clock).start();
    clock.advanceTimeBy(hour.multipliedBy(2).minusMillis(1));
    long slot = hour.toMillis() / ResyncPacer.MAX_SLOTS; // 6 s
    assertThat(added).hasSize(keys.size());
    assertThat(added.values()).allSatisfy(times -> assertThat((times.get(0) - hour.toMillis()) % slot).isZero());
    assertThat(added.values().stream().map(times -> times.get(0)).distinct().count())
        .isEqualTo(ResyncPacer.MAX_SLOTS);
  }

  @Test
  void aKeysSlotIsStableAndWithinTheSlots() {
    for (String key : keys.subList(0, 100)) {
      int slot = ResyncPacer.phase(key, 300);
      assertThat(slot).isBetween(0, 299).isEqualTo(ResyncPacer.phase(new String(key), 300));
    }
    assertThat(ResyncPacer.phase(Integer.MIN_VALUE, 7)).isBetween(0, 6);
    assertThat(ResyncPacer.phase(-1, 1)).isZero();
  }
}
