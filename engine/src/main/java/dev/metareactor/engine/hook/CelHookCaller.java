package dev.metareactor.engine.hook;

import dev.metareactor.engine.cel.CelHookException;
import dev.metareactor.engine.cel.CelHookProgram;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;

/**
 * A {@link HookCaller} that evaluates a CEL hook in the engine: its answer goes where a webhook's would, so
 * everything after it (checks, writes, events, retries) is the webhook path's.
 *
 * <p>The evaluation runs on {@code evaluateOn} (never on a Netty event loop, nor on the few threads of the work
 * scheduler that every controller's syncs share: a CEL hook near its limits takes CPU time a webhook would take on
 * its own server). The evaluation stops itself at its timeout; should a single built-in function keep it past that,
 * the call still ends at the timeout plus {@link #GRACE}, so a sync never waits on it longer.
 */
public final class CelHookCaller implements HookCaller {

  /** How long past its own timeout a call waits for an evaluation that has not stopped itself. */
  static final Duration GRACE = Duration.ofSeconds(1);

  private final String hookType;
  private final CelHookProgram program;
  private final Scheduler evaluateOn;
  private final Scheduler timer;

  /**
   * @param hookType the hook's name ({@code sync}, {@code finalize}...), for messages
   * @param evaluateOn where evaluations run
   * @param timer where the backstop timeout is timed
   */
  public CelHookCaller(String hookType, CelHookProgram program, Scheduler evaluateOn, Scheduler timer) {
    this.hookType = Objects.requireNonNull(hookType, "hookType");
    this.program = Objects.requireNonNull(program, "program");
    this.evaluateOn = Objects.requireNonNull(evaluateOn, "evaluateOn");
    this.timer = Objects.requireNonNull(timer, "timer");
  }

  @Override
  public Mono<JsonNode> call(JsonNode request, RootObject root) {
    Duration limit = program.limits().timeout().plus(GRACE);
    return Mono.fromCallable(() -> program.evaluate(request))
        .subscribeOn(evaluateOn)
        .timeout(limit, timer)
        .onErrorMap(TimeoutException.class, e -> new CelHookException("the CEL hook went over its timeout of "
            + program.limits().timeout().toMillis() + " ms and did not stop within " + GRACE.toMillis() + " ms more"))
        .onErrorMap(CelHookException.class, e -> new CelHookException(hookType + " hook: " + e.getMessage(), e));
  }

  @Override
  public String toString() {
    return "CEL " + hookType + " hook";
  }
}
