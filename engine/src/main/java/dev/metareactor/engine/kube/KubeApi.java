package dev.metareactor.engine.kube;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.ssl.SslContext;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.resources.ConnectionProvider;

/**
 * The engine's connection to the API server: HTTP/1.1 on Reactor Netty — the same event loops the hook client uses,
 * TLS through OpenSSL when netty-tcnative is present — sending and receiving JSON bytes, never blocking a thread.
 *
 * <ul>
 *   <li>{@link #send} is one request whose answer is read whole. Requests share a pool of at most
 *       {@code maxConnections} keep-alive connections; more wait for one, so the pool also bounds how many
 *       requests are in flight ({@code --api-concurrency}).</li>
 *   <li>{@link #watch} streams a watch's body line by line on a connection of its own, so long-running watches
 *       never take a request's connection.</li>
 *   <li>A 401 re-resolves the credentials ({@link KubeConfig#refreshRejected}: once for all the requests the same
 *       token failed, at most once a second) and repeats the request once, and a watch refused with 401 re-resolves
 *       them before its informer tries again: expiring tokens (exec plugins, rotated service-account tokens) keep
 *       working.</li>
 *   <li>Every request but a read asks the {@link WriteFence} ({@link #fenceWrites}) before it waits for a connection
 *       and again just before it is sent, so a request that waited for a connection across a pause of the process is
 *       not sent for a lease that expired meanwhile; a refused one fails with {@link WriteFence.Refused}.</li>
 * </ul>
 *
 * <p>Errors: a non-2xx answer fails with {@link ApiException}; transport failures fail with Netty's exceptions.
 */
public final class KubeApi implements AutoCloseable {

  public static final String JSON = "application/json";
  private static final Logger LOG = LoggerFactory.getLogger(KubeApi.class);
  private static final byte[] EMPTY = new byte[0];
  private static final int MAX_LINE = 64 << 20;
  /**
   * The engine's User-Agent; the API server names the field manager of its writes other than server-side applies
   * after it ({@code managedFields}' {@code metareactor}, where Metacontroller's writes say {@code metacontroller}).
   */
  public static final String USER_AGENT = "metareactor";

  private final KubeConfig config;
  private final ConnectionProvider pool;
  private final HttpClient requests;
  private final HttpClient watches;
  private final @Nullable Disposable refreshing;
  private volatile WriteFence fence = WriteFence.OPEN;

  /** @param maxConnections requests in flight at once (more wait for a connection) */
  public KubeApi(KubeConfig config, int maxConnections) {
    this.config = Objects.requireNonNull(config, "config");
    this.pool = ConnectionProvider.builder("kube-api")
        .maxConnections(maxConnections)
        .pendingAcquireMaxCount(-1)
        .pendingAcquireTimeout(Duration.ofMinutes(10))
        .maxIdleTime(Duration.ofSeconds(60))
        .evictInBackground(Duration.ofSeconds(30))
        .build();
    this.requests = configure(HttpClient.create(pool)).responseTimeout(config.requestTimeout());
    this.watches = configure(HttpClient.newConnection());
    // Credentials that expire (an exec plugin's token) or rotate (a service-account token file) are resolved again
    // ahead of time, off the event loops; a 401 does the same at once.
    this.refreshing = config.refreshIn() == null ? null
        : Mono.defer(() -> Mono.delay(Objects.requireNonNullElse(config.refreshIn(), Duration.ofMinutes(1)),
                Schedulers.boundedElastic()))
            .doOnNext(tick -> config.refreshCredentials())
            .repeat()
            .subscribe();
  }

  private HttpClient configure(HttpClient client) {
    HttpClient configured = client.baseUrl(config.server().toString())
        .keepAlive(true)
        .headers(headers -> headers.set(HttpHeaderNames.USER_AGENT, USER_AGENT));
    SslContext ssl = config.ssl();
    return ssl == null ? configured : configured.secure(spec -> spec.sslContext(ssl));
  }

  public KubeConfig config() {
    return config;
  }

  /** From now on, every request but a read ({@code GET}) is sent only while {@code fence} lets it. */
  public void fenceWrites(WriteFence fence) {
    this.fence = Objects.requireNonNull(fence, "fence");
  }

  /** Why {@code method} must not be sent now, or {@code null}. */
  private @Nullable String refusal(HttpMethod method) {
    return method.equals(HttpMethod.GET) ? null : fence.refusal();
  }

  /**
   * Sends one request.
   *
   * @param path the path and query, e.g. {@code /api/v1/namespaces/ns/configmaps/a}
   * @param contentType the body's type; ignored without a body
   * @param body the request body, or {@code null}
   * @return the answer's body (empty bytes for none); fails with {@link ApiException} for a non-2xx answer
   */
  public Mono<byte[]> send(String method, String path, @Nullable String contentType, byte @Nullable [] body) {
    return send(HttpMethod.valueOf(method), path, contentType, JSON, body);
  }

  /** A GET asking for {@code accept} (discovery's aggregated formats). */
  public Mono<byte[]> get(String path, String accept) {
    return send(HttpMethod.GET, path, null, accept, null);
  }

  private Mono<byte[]> send(HttpMethod method, String path, @Nullable String contentType, String accept,
      byte @Nullable [] body) {
    return exchange(method, path, contentType, accept, body)
        .flatMap(answer -> answer.code() != 401 ? Mono.just(answer)
            : refreshRejected(answer.authorization()).then(exchange(method, path, contentType, accept, body)))
        .flatMap(answer -> answer.code() / 100 == 2 ? Mono.just(answer.body())
            : Mono.error(ApiException.of(method.name(), path, answer.code(), answer.body(), answer.retryAfter())));
  }

  /** The server refused {@code authorization} (401): the credentials resolved again, off the event loops. */
  private Mono<Void> refreshRejected(@Nullable String authorization) {
    return Mono.<Void>fromRunnable(() -> config.refreshRejected(authorization))
        .subscribeOn(Schedulers.boundedElastic());
  }

  /** An answer, with the {@code Authorization} header its request carried. */
  private record Answer(int code, byte[] body, @Nullable String retryAfter, @Nullable String authorization) {}

  private Mono<Answer> exchange(HttpMethod method, String path, @Nullable String contentType, String accept,
      byte @Nullable [] body) {
    return Mono.defer(() -> {
      String refused = refusal(method);
      if (refused != null) {
        return Mono.error(new WriteFence.Refused(method + " " + path, refused));
      }
      String authorization = config.authorization();
      return requests.request(method).uri(path)
          .send((request, out) -> {
            // Asked again with a connection in hand: the wait for one may have spanned a pause of the process.
            String late = refusal(method);
            if (late != null) {
              return Mono.error(new WriteFence.Refused(method + " " + path, late));
            }
            request.header(HttpHeaderNames.ACCEPT, accept);
            if (authorization != null) {
              request.header(HttpHeaderNames.AUTHORIZATION, authorization);
            }
            if (body == null) {
              return out;
            }
            request.header(HttpHeaderNames.CONTENT_TYPE, Objects.requireNonNull(contentType, "a body's type"));
            request.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length));
            return out.send(Mono.just(Unpooled.wrappedBuffer(body)));
          })
          .responseSingle((response, content) -> content.asByteArray().defaultIfEmpty(EMPTY)
              .map(bytes -> new Answer(response.status().code(), bytes,
                  response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER), authorization)));
    });
  }

  /**
   * A watch ({@code ?watch=1...}): each line of the body as it arrives (one watch event each). Completes when the
   * server ends the watch; fails with {@link ApiException} when the server refuses it.
   */
  public Flux<byte[]> watch(String path) {
    return watch(path, JSON);
  }

  /** A watch asking for {@code accept} (metadata only, say). */
  public Flux<byte[]> watch(String path, String accept) {
    return watch(path, accept, () -> { });
  }

  /**
   * A watch asking for {@code accept}; {@code accepted} runs once the server has accepted it (answered 200), before
   * any line: a quiet resource's watch may carry no line for minutes, and a caller may need to know it is connected.
   */
  public Flux<byte[]> watch(String path, String accept, Runnable accepted) {
    return Flux.defer(() -> {
      String authorization = config.authorization();
      HttpClient client = authorization == null ? watches
          : watches.headers(headers -> headers.set(HttpHeaderNames.AUTHORIZATION, authorization));
      return client.headers(headers -> headers.set(HttpHeaderNames.ACCEPT, accept)).get().uri(path)
          .response((response, content) -> lines(path, response, content, accepted, authorization));
    });
  }

  private Flux<byte[]> lines(String path, HttpClientResponse response, ByteBufFlux content, Runnable accepted,
      @Nullable String authorization) {
    int code = response.status().code();
    if (code != 200) {
      // A watch refused with 401 re-reads the credentials too, before the informer tries again: a cache that only
      // watches (no list, no write) would otherwise retry with the rejected token until the next periodic re-read.
      Mono<Void> refreshed = code == 401 ? refreshRejected(authorization) : Mono.empty();
      return content.aggregate().asByteArray().defaultIfEmpty(EMPTY)
          .flatMapMany(body -> refreshed.then(Mono.error(ApiException.of("GET", path, code, body,
              response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER)))));
    }
    accepted.run();
    JsonLines lines = new JsonLines(MAX_LINE);
    return content.asByteArray().concatMapIterable(lines::feed)
        .concatWith(Mono.fromSupplier(lines::rest))
        .doOnError(error -> LOG.debug("watch {} ended: {}", path, error.toString()));
  }

  @Override
  public void close() {
    if (refreshing != null) {
      refreshing.dispose();
    }
    pool.dispose();
  }
}
