package dev.metareactor.engine.controller;

import dev.metareactor.engine.hook.SyncResponse;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A hook's answer as the kind checked it, whole, before anything is written.
 *
 * @param desired the owned objects to converge to
 * @param keptAsTheyAre the UIDs of owned objects to leave exactly as they are, whatever {@code desired} says (a
 *     tombstone hook's answer: detached outputs it keeps)
 * @param ownWrites the kind's writes to the synced object; completes with whether it is still the object synced (not
 *     gone, not replaced by a namesake), so that the finalizer may be removed from it
 * @param last the kind's last write, made only when every other write of the sync succeeded (a CompositeController's
 *     {@code deleteParent}), or {@code null}
 */
public record Answer(List<DesiredChild> desired, Set<String> keptAsTheyAre, Supplier<Mono<Boolean>> ownWrites,
    @Nullable Supplier<Mono<Void>> last) {

  public Answer {
    desired = List.copyOf(desired);
    keptAsTheyAre = Set.copyOf(keptAsTheyAre);
    Objects.requireNonNull(ownWrites, "ownWrites");
  }

  /** The owned objects converged to {@code desired}, except those kept as they are, then the kind's writes. */
  public Answer(List<DesiredChild> desired, Set<String> keptAsTheyAre, Supplier<Mono<Boolean>> ownWrites) {
    this(desired, keptAsTheyAre, ownWrites, null);
  }

  /** The owned objects converged to {@code desired}, then the kind's writes. */
  public Answer(List<DesiredChild> desired, Supplier<Mono<Boolean>> ownWrites) {
    this(desired, Set.of(), ownWrites, null);
  }

  /**
   * An answer checked by the kind, with the response the sync follows for its Events, {@code resyncAfterSeconds} and
   * {@code finalized}.
   */
  public record Checked(SyncResponse response, Answer answer) {

    public Checked {
      Objects.requireNonNull(response, "response");
      Objects.requireNonNull(answer, "answer");
    }
  }
}
