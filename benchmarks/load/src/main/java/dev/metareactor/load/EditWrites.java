package dev.metareactor.load;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Splits the trickle's edit-to-converged times at the engine's writes: for each timed edit, when the API server
 * received the last write the engine made for it, from the audit log. That part is the engine's (with the edit's way
 * to it through the API server's watch); the rest is the API server answering those writes and its watch bringing
 * them to the harness. On a machine whose cores the control plane shares, a tail can lie wholly in the second part,
 * and only this split tells the two apart.
 *
 * <p>An edit's writes are those to the unit itself (a parent's status) and to objects named after it ({@code
 * <unit>-<n>}, its children, as {@code loadkit} names them), received between the edit and the moment the harness saw
 * it converged. An edit none of whose writes is found (one overtaken by a later edit of the same parent) has no split.
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
    int first = name.indexOf('-');
    return dash > first && first >= 0 && name.substring(dash + 1).chars().allMatch(Character::isDigit)
        ? name.substring(0, dash)
        : name;
  }

  /**
   * Milliseconds from the edit until the API server received the last of its writes, or {@code NaN} when none is
   * found.
   */
  double sentMillis(ConvergenceWatch.TimedEdit edit) {
    Instant from = Instant.ofEpochSecond(0, edit.stampNanos());
    Instant until = from.plusNanos((long) (edit.millis() * 1e6));
    Instant last = null;
    for (RequestCounts.Write write : byUnit.getOrDefault(edit.unit(), List.of())) {
      if (!write.received().isBefore(from) && !write.received().isAfter(until)
          && (last == null || write.received().isAfter(last))) {
        last = write.received();
      }
    }
    return last == null ? Double.NaN : Duration.between(from, last).toNanos() / 1e6;
  }

  /** {@link #sentMillis} of each edit that has one, sorted. */
  List<Double> sentMillis(List<ConvergenceWatch.TimedEdit> edits) {
    List<Double> sent = new ArrayList<>();
    for (ConvergenceWatch.TimedEdit edit : edits) {
      double millis = sentMillis(edit);
      if (!Double.isNaN(millis)) {
        sent.add(millis);
      }
    }
    sent.sort(null);
    return sent;
  }
}
