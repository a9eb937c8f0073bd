package dev.metareactor.load;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Splits the trickle's edit-to-converged times at the engine's writes: for each timed edit, when the API server
 * received the last write the engine made for it, from the audit log. That part is the engine's (with the edit's way
 * to it through the API server's watch); the rest is the API server answering those writes and its watch bringing
 * them to the harness. On a machine whose cores the control plane shares, a tail can lie wholly in the second part,
 * and only this split tells the two apart.
 *
 * <p>An edit's writes are those to the unit itself (a parent's status) and to objects named after it ({@code
 * <unit>-<n>}, its children, as {@code loadkit} names them), received between the edit and the moment the harness saw
 * it converged; an edit overtaken by a later one of the same parent is split at the writes that showed the later one
 * (which showed it too). An edit none of whose writes is found has no split.
 */
final class EditWrites {

  private final Map<String, List<RequestCounts.Write>> byUnit = new HashMap<>();

  /** @param writes the engine's writes during the trickle ({@link RequestCounts.AuditLog#writesSince}) */
  EditWrites(List<RequestCounts.Write> writes) {
    for (RequestCounts.Write write : writes) {
      byUnit.computeIfAbsent(unitOf(write.name()), u -> new ArrayList<>()).add(write);
    }
  }

  /** The unit an object written belongs to: {@code p-00042} for {@code p-00042} and {@code p-00042-1}. */
  static String unitOf(String name) {
    int dash = name.lastIndexOf('-');
    return dash > name.indexOf('-') && name.substring(dash + 1).chars().allMatch(Character::isDigit)
        ? name.substring(0, dash)
        : name;
  }

  /** The last of the edit's writes the API server received, if any was found. */
  Optional<RequestCounts.Write> lastWrite(ConvergenceWatch.TimedEdit edit) {
    Instant from = edit.stamp();
    Instant until = from.plusNanos((long) (edit.millis() * 1e6));
    RequestCounts.Write last = null;
    for (RequestCounts.Write write : byUnit.getOrDefault(edit.unit(), List.of())) {
      if (!write.received().isBefore(from) && !write.received().isAfter(until)
          && (last == null || write.received().isAfter(last.received()))) {
        last = write;
      }
    }
    return Optional.ofNullable(last);
  }

  /** Milliseconds from the edit until {@code then}. */
  static double millisAfter(ConvergenceWatch.TimedEdit edit, Instant then) {
    return Duration.between(edit.stamp(), then).toNanos() / 1e6;
  }

  /**
   * For each edit whose writes were found, the milliseconds from it until the API server received the last of them,
   * sorted.
   */
  List<Double> sentMillis(List<ConvergenceWatch.TimedEdit> edits) {
    List<Double> sent = new ArrayList<>();
    for (ConvergenceWatch.TimedEdit edit : edits) {
      lastWrite(edit).ifPresent(write -> sent.add(millisAfter(edit, write.received())));
    }
    sent.sort(null);
    return sent;
  }
}
