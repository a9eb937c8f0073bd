package dev.metareactor.engine.hook;

import dev.metareactor.engine.kube.KubeObject;
import dev.metareactor.engine.kube.WriteFence;
import dev.metareactor.engine.tracing.SyncTrace;
import dev.metareactor.http.CacheKey;
import dev.metareactor.http.Hook;
import dev.metareactor.http.HookResponse;
import dev.metareactor.http.HookRetryAfterException;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import java.net.URI;
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
    return Mono.deferContextual(context -> {
      String refusal = fence.refusal();
      if (refusal != null) {
        return Mono.error(new WriteFence.Refused("hook call", refusal));
      }
      SyncTrace trace = SyncTrace.of(context);
      return trace == null ? send(request, root, null) : traced(trace, request, root);
    });
  }

  /**
   * The call in a {@code CLIENT} span {@code hook <type>} under the sync's current span, whose W3C headers the
   * request carries: the hook's endpoint ({@code server.address}, {@code server.port}, {@code url.path}; never the
   * query, which may hold credentials), the object it is about, and from the answer whether it came from the ETag
   * cache and how many attempts it took.
   */
  private Mono<JsonNode> traced(SyncTrace trace, JsonNode request, RootObject root) {
    Hook hook = target.hook();
    SpanBuilder span = trace.child("hook " + (hook == null ? "unusable" : hook.identity().hookType()),
            SpanKind.CLIENT)
        .setAttribute("http.request.method", "POST")
        .setAttribute("metareactor.hook.object", root.kind() + " "
            + KubeObject.namespacedName(root.namespace(), root.name()));
    if (hook != null) {
      URI uri = hook.spec().endpoint().uri();
      span.setAttribute("server.address", String.valueOf(uri.getHost()))
          .setAttribute("url.path", String.valueOf(uri.getRawPath()));
      if (uri.getPort() > 0) {
        span.setAttribute("server.port", (long) uri.getPort());
      }
    }
    return trace.hookCall(span, started -> send(request, root, started));
  }

  /** @param span the call's span, told what the answer says of the call; {@code null} when not traced */
  private Mono<JsonNode> send(JsonNode request, RootObject root, @Nullable Span span) {
    Target current = target;
    Hook hook = current.hook();
    if (hook == null) {
      return Mono.error(new IllegalStateException(current.problem()));
    }
    Mono<HookResponse> response = hook.call(request, new CacheKey(root.kind(), root.namespace(), root.name()));
    if (span != null) {
      response = response.doOnNext(answer -> span.setAttribute("metareactor.hook.etag_cached", answer.cached())
          .setAttribute("metareactor.hook.attempts", (long) answer.attempts()));
    }
    Mono<JsonNode> answer = response
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
