package dev.metareactor.engine.hook;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.http.CacheKey;
import dev.metareactor.http.Hook;
import dev.metareactor.http.HookResponse;
import dev.metareactor.http.HookRetryAfterException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.JsonNode;

/**
 * A {@link HookCaller} over a webhook of the hook client: the answer's body, a 429 with a usable {@code Retry-After}
 * turned into {@link RetryAfterException} (one without stays a failure: the sync backs off and counts it, so an
 * overloaded hook that does not say for how long is never called in a hot loop), and the rest of the sync moved off
 * the Netty event loop that delivered the answer (merging children and building writes is CPU work that must not
 * delay other hooks' I/O).
 *
 * <p>At trace level ({@code --zap-log-level} 5 and more) each call's request and answer are logged whole, as
 * upstream logs its hook calls at those verbosities; below it nothing of them is written or even serialized.
 *
 * <p>The hook can be {@linkplain #use replaced} while syncs run (its TLS material or credentials changed), or
 * {@linkplain #unusable made unusable} with a reason (a Secret it needs is missing): calls then fail with that
 * reason until a usable hook is set again. A call uses the hook set when it starts.
 *
 * <p>Each call asks the replica's {@link WriteFence} again when it is subscribed, right before the request goes out:
 * the sync asked it when it began, but a process stopped (SIGSTOP, a frozen VM) between that and the call would
 * otherwise call the hook for a parent another replica may hold by now. Nothing is sent on a refusal.
 */
public final class WebhookCaller implements HookCaller {

  private static final Logger LOG = LoggerFactory.getLogger(WebhookCaller.class);

  /** What a call goes to: a hook, or the reason there is none. */
  private record Target(@Nullable Hook hook, @Nullable String problem) {}

  private final Scheduler continueOn;
  private final WriteFence fence;
  private volatile Target target;

  /**
   * A caller that fails its calls with {@code problem} until {@link #use} gives it a hook.
   *
   * @param continueOn where the caller's pipeline continues after the answer arrives
   * @param fence asked right before each call is made
   */
  public WebhookCaller(String problem, Scheduler continueOn, WriteFence fence) {
    this.continueOn = Objects.requireNonNull(continueOn, "continueOn");
    this.fence = Objects.requireNonNull(fence, "fence");
    unusable(problem);
  }

  /** Calls go to {@code hook} from now on. */
  public void use(Hook hook) {
    this.target = new Target(Objects.requireNonNull(hook, "hook"), null);
  }

  /** Calls fail with {@code problem} until {@link #use} is called again. */
  public void unusable(String problem) {
    this.target = new Target(null, Objects.requireNonNull(problem, "problem"));
  }

  @Override
  public Mono<JsonNode> call(JsonNode request, RootObject root) {
    return Mono.defer(() -> {
      String refusal = fence.refusal();
      return refusal != null ? Mono.error(new WriteFence.Refused("hook call", refusal)) : send(request, root);
    });
  }

  private Mono<JsonNode> send(JsonNode request, RootObject root) {
    Target current = target;
    Hook hook = current.hook();
    if (hook == null) {
      return Mono.error(new IllegalStateException(current.problem()));
    }
    Mono<JsonNode> answer = hook.call(request, new CacheKey(root.kind(), root.namespace(), root.name()))
        .publishOn(continueOn)
        .map(HookResponse::body);
    if (LOG.isTraceEnabled()) {
      String about = root.kind() + " " + KubeObject.namespacedName(root.namespace(), root.name());
      answer = answer
          .doOnSubscribe(call -> LOG.trace("{}: request about {}: {}", hook, about, request))
          .doOnNext(body -> LOG.trace("{}: answer about {}: {}", hook, about, body));
    }
    return answer
        .onErrorMap(e -> e instanceof HookRetryAfterException tooMany && tooMany.hasDelay(),
            e -> new RetryAfterException(((HookRetryAfterException) e).retryAfter(), e.getMessage()));
  }

  @Override
  public String toString() {
    Target current = target;
    return current.hook() != null ? current.hook().toString() : "unusable hook: " + current.problem();
  }
}
