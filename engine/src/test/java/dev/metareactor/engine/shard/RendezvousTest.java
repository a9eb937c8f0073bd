package dev.metareactor.engine.shard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RendezvousTest {

  /** 3,000 parents' UIDs, fixed so that the test says the same every run. */
  private static final List<String> UIDS = IntStream.range(0, 3000)
      .mapToObj(i -> new UUID(0x5eed_0000_0000_0000L + i * 7919L, i * 104_729L).toString()).toList();

  private static Map<String, String> owners(List<String> shards) {
    Map<String, String> owners = new HashMap<>();
    UIDS.forEach(uid -> owners.put(uid, Rendezvous.owner(uid, shards)));
    return owners;
  }

  @Test
  void threeShardsEachGetAThirdWithinFifteenPercent() {
    Map<String, Long> counts = new HashMap<>();
    owners(List.of("metacontroller-0", "metacontroller-1", "metacontroller-2")).values()
        .forEach(shard -> counts.merge(shard, 1L, Long::sum));
    assertThat(counts).hasSize(3);
    assertThat(counts.values()).allSatisfy(count -> assertThat(count).isBetween(850L, 1150L));
  }

  @Test
  void aFourthShardTakesAboutAQuarterAndOnlyFromTheOthers() {
    Map<String, String> before = owners(List.of("a", "b", "c"));
    Map<String, String> after = owners(List.of("a", "b", "c", "d"));
    long moved = UIDS.stream().filter(uid -> !before.get(uid).equals(after.get(uid))).count();
    assertThat(moved).isBetween(600L, 900L); // a quarter is 750
    assertThat(UIDS.stream().filter(uid -> !before.get(uid).equals(after.get(uid))))
        .as("every move goes to the new shard").allSatisfy(uid -> assertThat(after.get(uid)).isEqualTo("d"));
  }

  @Test
  void aShardLeavingGivesAwayOnlyItsOwn() {
    Map<String, String> before = owners(List.of("a", "b", "c", "d"));
    Map<String, String> after = owners(List.of("a", "b", "d"));
    assertThat(UIDS).allSatisfy(uid -> {
      if (!before.get(uid).equals("c")) {
        assertThat(after.get(uid)).isEqualTo(before.get(uid));
      }
    });
  }

  @Test
  void theOrderOfTheShardsDoesNotMatterAndNoShardsIsNoOwner() {
    assertThat(owners(List.of("c", "a", "b"))).isEqualTo(owners(List.of("a", "b", "c")));
    assertThat(Rendezvous.owner("uid", List.of())).isNull();
  }
}
