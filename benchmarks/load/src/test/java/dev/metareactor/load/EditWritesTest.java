package dev.metareactor.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class EditWritesTest {

  private static final Instant EDIT = Instant.parse("2026-11-28T01:40:07.884Z");

  @Test
  void aChildBelongsToItsParentAndAParentToItself() {
    assertThat(EditWrites.unitOf("p-00790-2")).isEqualTo("p-00790");
    assertThat(EditWrites.unitOf("p-00790")).isEqualTo("p-00790");
    assertThat(EditWrites.unitOf("in-00007")).isEqualTo("in-00007");
    assertThat(EditWrites.unitOf("shared-3")).isEqualTo("shared-3");
  }

  @Test
  void anEditsShareIsUntilTheApiServerReceivedItsLastWriteWithinTheEditsTime() {
    EditWrites writes = new EditWrites(List.of(
        write("p-00790-0", 98),
        write("p-00790", 570), // the status, after the children: the last write
        write("p-00790-1", 181),
        write("p-00791", 900), // another parent's
        write("p-00790-2", -40), // before the edit: an earlier sync's
        write("p-00790-2", 1300))); // after the edit was seen converged: a later sync's
    ConvergenceWatch.TimedEdit edit = new ConvergenceWatch.TimedEdit("p-00790", stamp(EDIT), 1162);

    assertThat(writes.lastWrite(edit)).hasValueSatisfying(last -> {
      assertThat(EditWrites.millisAfter(edit, last.received())).isEqualTo(570.0);
      assertThat(EditWrites.millisAfter(edit, last.answered())).isEqualTo(970.0);
    });
    assertThat(writes.sentMillis(List.of(edit, new ConvergenceWatch.TimedEdit("p-00002", stamp(EDIT), 30))))
        .as("an edit without writes found has no share")
        .containsExactly(570.0);
  }

  private static RequestCounts.Write write(String name, long afterMillis) {
    Instant received = EDIT.plusMillis(afterMillis);
    return new RequestCounts.Write(name, received, received.plusMillis(400));
  }

  private static long stamp(Instant instant) {
    return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
  }
}
