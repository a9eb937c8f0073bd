package dev.metareactor.http;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Keeps the hook answers received within a piece of work charged to the hook client's memory budget for answers
 * until that work is done. The engine wraps each sync in one: a sync keeps its answers' trees (the desired children
 * are parts of them) until its writes are done, so that is how long they take memory. Without a scope, an answer is
 * let go of when its call's {@code Mono} ends. See {@link HookClientOptions#answerMemoryBytes()}.
 *
 * <pre>{@code
 * Mono<Outcome> run = AnswerScope.around(sync(key));   // answers of hooks called in sync(key) count until it ends
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class AnswerScope {

  private final List<AnswerMemory.Charge> held = new ArrayList<>();
  private boolean closed;

  AnswerScope() {}

  /**
   * {@code work}, with every hook answer received while it runs held until it terminates or is cancelled.
   * Nothing happens until subscription; each subscription has a scope of its own.
   */
  public static <T> Mono<T> around(Mono<T> work) {
    return Mono.defer(() -> {
      AnswerScope scope = new AnswerScope();
      return work.contextWrite(context -> context.put(AnswerScope.class, scope)).doFinally(signal -> scope.close());
    });
  }

  /** The scope of the work a call runs within, or {@code null}. */
  static @Nullable AnswerScope of(ContextView context) {
    return context.getOrDefault(AnswerScope.class, null);
  }

  /** Holds an answer's charge until {@link #close}; closes it at once if the scope is closed already. */
  synchronized void hold(AnswerMemory.Charge charge) {
    if (closed) {
      charge.close();
    } else {
      held.add(charge);
    }
  }

  /** Stops holding a charge without closing it (it is handed to another scope). */
  synchronized void release(AnswerMemory.Charge charge) {
    held.remove(charge);
  }

  /** Closes every charge held, and every one held from now on. */
  synchronized void close() {
    closed = true;
    held.forEach(AnswerMemory.Charge::close);
    held.clear();
  }

  /** Hands {@code charge} from this scope to {@code to}, or leaves it here when {@code to} is null. */
  void handOver(AnswerMemory.Charge charge, @Nullable AnswerScope to) {
    if (to != null && to != this) {
      release(charge);
      to.hold(charge);
    }
  }
}
