package dev.metareactor.http;

import dev.metareactor.http.HookCallException.Reason;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * One hook of one controller, ready to call. Obtained from {@link HookClient#hook}; cheap to keep, safe to share
 * between threads, and meant to live as long as its controller.
 *
 * <p>A {@link #call} is one {@code POST} of the request as JSON, with:
 *
 * <ul>
 *   <li>a deadline, the webhook's {@code timeout}, over the whole call, retries and backoff included;</li>
 *   <li>retries of transient failures with jittered exponential backoff (see {@link HookResilience});</li>
 *   <li>the endpoint's circuit breaker around the whole call: when it is open the call fails at once with
 *       {@link HookCallException.Reason#CIRCUIT_OPEN}, without touching the network;</li>
 *   <li>ETag revalidation when the webhook enables it: the cached {@code ETag} goes out as {@code If-None-Match},
 *       and a 304 or 412 answer yields the cached body;</li>
 *   <li>success only on HTTP 200 with a JSON body no larger than {@link HookClientOptions#maxResponseBytes()}; 429
 *       yields {@link HookRetryAfterException}; anything else a {@link HookCallException} with the status and the
 *       first {@value #ERROR_BODY_EXCERPT} bytes of the body on one line (see {@link BodyCollector#text()});</li>
 *   <li>the W3C {@code traceparent} and {@code tracestate} headers when the call's Reactor context carries
 *       {@link TraceHeaders} (the same on every attempt).</li>
 * </ul>
 *
 * <p>Why the breaker wraps the retries and the deadline rather than each attempt: a hook that accepts connections
 * but never answers only ever fails by running into the deadline, and the breaker must see that to open.
 *
 * <p>Threading: nothing blocks. The returned Mono signals on a Netty event loop (or on a Reactor timer thread for
 * timeouts and backoff, or on {@code boundedElastic} after parsing a body above 1 MiB); move heavy work downstream
 * off it with {@code publishOn}.
 */
public final class Hook {

  /**
   * How much of an error page goes into the failure's message (and so into Events and logs): enough to recognise
   * the error, too little to carry a page of whatever the hook echoes.
   */
  static final int ERROR_BODY_EXCERPT = 256;
  /** Larger bodies are parsed on boundedElastic so a 64 MiB answer does not stall an event loop. */
  private static final int PARSE_OFF_LOOP_BYTES = 1 << 20;

  private final WebhookSpec spec;
  private final HookIdentity identity;
  private final String name;
  private final HttpClient http;
  private final ObjectMapper json;
  private final HookMetrics metrics;
  private final CircuitBreaker breaker;
  private final Retry retry;
  private final @Nullable EtagCache etags;
  private final @Nullable Duration etagTimeToLive;
  private final String etagScope;
  private final long maxResponseBytes;
  private final AnswerMemory memory;
  private final Clock clock;

  /**
   * @param json the mapper answers are parsed with, under {@link AnswerLimits}
   * @param memory the budget of all answers in flight, shared by every hook of the client
   */
  Hook(WebhookSpec spec, HookIdentity identity, HttpClient http, ObjectMapper json, HookMetrics metrics,
      HookResilience resilience, EtagCache etags, long maxResponseBytes, AnswerMemory memory, Clock clock) {
    this.spec = spec;
    this.identity = identity;
    this.name = identity.hookType() + " hook " + spec.endpoint();
    this.http = http;
    this.json = json;
    this.metrics = metrics;
    this.breaker = resilience.breaker(spec.endpoint());
    this.retry = resilience.retry(spec.endpoint());
    this.etags = spec.etag().enabled() ? etags : null;
    this.etagTimeToLive = spec.etag().timeToLive().orElse(null);
    this.etagScope = name + " " + identity.controllerType() + "/" + identity.controllerName();
    this.maxResponseBytes = maxResponseBytes;
    this.memory = memory;
    this.clock = clock;
  }

  /**
   * Calls the hook. Nothing happens until subscription; each subscription is a new call with its own deadline,
   * retries and ETag lookup. The answer's memory counts against the client's budget for answers until the call
   * ends, or, when the call runs within an {@link AnswerScope}, until that scope's work ends.
   *
   * @param request the request body, serialized once per call
   * @param root the object the call is about: the key of its ETag cache entry
   * @return the answer; or {@link HookRetryAfterException} (429), or {@link HookCallException} for any failure
   */
  public Mono<HookResponse> call(JsonNode request, CacheKey root) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(root, "root");
    return Mono.deferContextual(context -> {
      AtomicInteger attempts = new AtomicInteger();
      // Every attempt's answer is charged here; whatever is not handed to the caller's scope goes when the call ends.
      AnswerScope call = new AnswerScope();
      AnswerScope caller = AnswerScope.of(context);
      TraceHeaders trace = TraceHeaders.of(context);
      AnswerBytes sizes = AnswerBytes.of(context);
      // Serialized inside the breaker: a call the open breaker refuses costs no serialization.
      return Mono.defer(() -> {
            byte[] body = json.writeValueAsBytes(request);
            return Mono.defer(() -> attempt(body, root, attempts.incrementAndGet(), call, trace))
                .transformDeferred(RetryOperator.of(retry));
          })
          .timeout(spec.timeout(), Mono.error(this::timedOut))
          .transformDeferred(CircuitBreakerOperator.of(breaker))
          .onErrorMap(error -> inContext(error, attempts.get()))
          .map(answer -> {
            if (answer.charge() != null) {
              call.handOver(answer.charge(), caller);
            }
            if (sizes != null) {
              sizes.add(answer.bytes());
            }
            return answer.response();
          })
          .doFinally(signal -> call.close());
    });
  }

  /** Drops the cached answer for this object (when it is deleted, say). */
  public void forget(CacheKey root) {
    Objects.requireNonNull(root, "root");
    if (etags != null) {
      etags.invalidate(etagKey(root));
    }
  }

  public WebhookSpec spec() {
    return spec;
  }

  public HookIdentity identity() {
    return identity;
  }

  /** The endpoint's circuit breaker state now. */
  public CircuitBreaker.State breakerState() {
    return breaker.getState();
  }

  @Override
  public String toString() {
    return name;
  }

  /**
   * An answer, what it takes of the memory budget ({@code null} for one from the ETag cache) and how many bytes its
   * body had (0 from the cache).
   */
  private record Answer(HookResponse response, AnswerMemory.@Nullable Charge charge, long bytes) {}

  private Mono<Answer> attempt(byte[] body, CacheKey root, int attempt, AnswerScope call,
      @Nullable TraceHeaders trace) {
    if (attempt > 1) {
      metrics.retried();
    }
    EtagCache.Entry cached = etags == null ? null : etags.get(etagKey(root));
    AtomicInteger status = new AtomicInteger();
    AtomicBoolean ended = new AtomicBoolean();
    long start = metrics.requestStarted();
    // Recorded before the answer goes downstream (not in doFinally) so the meters are current when a caller sees it.
    Runnable end = () -> {
      if (ended.compareAndSet(false, true)) {
        metrics.requestEnded(start, status.get());
      }
    };
    return http.post()
        .uri(spec.endpoint().uri())
        .send((request, out) -> {
          request.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length));
          if (cached != null) {
            request.header(HttpHeaderNames.IF_NONE_MATCH, cached.etag());
          }
          if (trace != null) {
            request.header(TraceHeaders.TRACEPARENT, trace.traceparent());
            String state = trace.tracestate();
            if (state != null) {
              request.header(TraceHeaders.TRACESTATE, state);
            }
          }
          return out.send(Mono.just(Unpooled.wrappedBuffer(body)));
        })
        .response((response, content) -> {
          status.set(response.status().code());
          return answer(response, content, root, cached, attempt, call);
        })
        .next()
        .onErrorMap(TransportErrors::classify)
        .doOnSuccess(response -> end.run())
        .doOnError(error -> end.run())
        .doOnCancel(end);
  }

  private Mono<Answer> answer(HttpClientResponse response, ByteBufFlux content, CacheKey root,
      EtagCache.@Nullable Entry cached, int attempt, AnswerScope call) {
    int code = response.status().code();
    if (code == 200) {
      long length = BodyCollector.contentLength(response.responseHeaders());
      if (length > maxResponseBytes) {
        return Mono.error(tooLarge());
      }
      String etag = response.responseHeaders().get(HttpHeaderNames.ETAG);
      AnswerMemory.Charge charge = memory.open();
      call.hold(charge);
      return content.reduceWith(() -> new BodyCollector((int) maxResponseBytes, maxResponseBytes, length,
              charge::add, this::tooLarge), BodyCollector::append)
          // The call ended while the body came in: nobody waits for it.
          .onErrorResume(AnswerMemory.Abandoned.class, abandoned -> Mono.empty())
          .flatMap(collected -> parse(collected, charge).map(parsed ->
              new Answer(fresh(parsed, etag, root, attempt), charge, collected.length())))
          // A failed attempt lets go at once: a retry must not find its own garbage in the way.
          .doOnError(error -> charge.close());
    }
    if ((code == 304 || code == 412) && etags != null) {
      return content.then(Mono.fromSupplier(() -> new Answer(fromCache(cached, root, code, attempt), null, 0)));
    }
    if (code == 429) {
      String retryAfter = response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER);
      return content.then(Mono.error(() -> HookRetryAfterException.fromHeader(retryAfter, clock)));
    }
    return content.reduceWith(() -> new BodyCollector(ERROR_BODY_EXCERPT, maxResponseBytes, -1, bytes -> { },
            this::tooLarge), BodyCollector::append)
        .flatMap(page -> Mono.error(new HookCallException(Reason.STATUS,
            "unsupported status code: " + code + " body: " + page.text(), code, isTransientStatus(code), null)));
  }

  private HookCallException tooLarge() {
    return new HookCallException(Reason.INVALID_RESPONSE, "response body exceeds the limit of " + maxResponseBytes
        + " bytes", 200, false, null);
  }

  /** 500 is transient on purpose, see {@link HookResilience}. */
  private static boolean isTransientStatus(int code) {
    return code == 500 || code == 502 || code == 503 || code == 504;
  }

  /**
   * A parsed answer.
   *
   * @param weight the tree's estimated heap (see {@link WeighedParser})
   */
  private record Parsed(JsonNode body, long weight) {}

  private Mono<Parsed> parse(BodyCollector body, AnswerMemory.Charge charge) {
    // Empty only when the call ended meanwhile (see readJson): then nobody is subscribed any more.
    Mono<Parsed> parse = Mono.fromCallable(() -> readJson(body, charge));
    return body.length() > PARSE_OFF_LOOP_BYTES ? parse.subscribeOn(Schedulers.boundedElastic()) : parse;
  }

  /**
   * Parses under {@link AnswerLimits}, charging the tree to the memory budget as it is built; the body's buffer is
   * let go of once the tree exists. Stops at once, returning {@code null}, when the call ended meanwhile (its charge
   * was closed): a timed-out call's parse would otherwise run on, off the books.
   */
  private @Nullable Parsed readJson(BodyCollector body, AnswerMemory.Charge charge) {
    JsonNode node;
    WeighedParser parser = new WeighedParser(json.createParser(body.bytes(), 0, body.length()), charge);
    try (parser) {
      node = json.readTree(parser);
      parser.chargeRest();
    } catch (AnswerMemory.Abandoned e) {
      return null;
    } catch (StreamConstraintsException e) {
      throw new HookCallException(Reason.INVALID_RESPONSE, "response exceeds a limit of the JSON parser: "
          + e.getOriginalMessage(), 200, false, null);
    } catch (JacksonException e) {
      throw new HookCallException(Reason.INVALID_RESPONSE, "malformed JSON in response: " + e.getOriginalMessage(),
          200, false, e);
    }
    charge.remove(body.capacity());
    if (node == null || node.isMissingNode()) {
      throw new HookCallException(Reason.INVALID_RESPONSE, "empty response body", 200, false, null);
    }
    return new Parsed(node, parser.weight());
  }

  private HookResponse fresh(Parsed parsed, @Nullable String etag, CacheKey root, int attempt) {
    if (etags != null) {
      metrics.etagLookup(false);
      if (etag != null && !etag.isEmpty()) {
        etags.put(etagKey(root), etag, parsed.body(), parsed.weight(), etagTimeToLive);
      } else {
        // The hook stopped tagging this answer: an older tag must not revive an older body.
        etags.invalidate(etagKey(root));
      }
    }
    return new HookResponse(parsed.body(), false, attempt);
  }

  private HookResponse fromCache(EtagCache.@Nullable Entry cached, CacheKey root, int code, int attempt) {
    if (cached == null) {
      throw new HookCallException(Reason.INVALID_RESPONSE,
          "hook answered " + code + " but cannot find cached response for cache key: " + root, code, false, null);
    }
    metrics.etagLookup(true);
    return new HookResponse(cached.body(), true, attempt);
  }

  private EtagCache.Key etagKey(CacheKey root) {
    return new EtagCache.Key(etagScope, root);
  }

  private HookCallException timedOut() {
    return new HookCallException(Reason.TIMEOUT, "timed out after " + GoDuration.format(spec.timeout()), 0, false,
        null);
  }

  private HookCallException inContext(Throwable error, int attempts) {
    HookCallException failure = error instanceof CallNotPermittedException
        ? new HookCallException(Reason.CIRCUIT_OPEN, "circuit breaker is open, failing fast without calling the hook",
            0, false, error)
        : TransportErrors.classify(error);
    return failure.inContext(name, attempts, breaker.getState());
  }
}
