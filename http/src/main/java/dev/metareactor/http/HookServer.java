package dev.metareactor.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.opentelemetry.api.OpenTelemetry;
import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * A small HTTP server for writing hooks in Java: each route maps a path to a function from the request JSON to the
 * response JSON.
 *
 * <pre>{@code
 * try (HookServer server = HookServer.builder()
 *     .route("/sync", request -> desiredState(request))
 *     .start()) {
 *   String url = server.url("/sync");   // port 0 picks a free port
 *   ...
 * }
 * }</pre>
 *
 * <p>Routes answer {@code POST} only: 200 with the function's JSON, 400 when the request is not JSON, 404 for an
 * unknown path, 405 for another method, 413 for a request body above {@link Builder#maxRequestBytes} (refused on
 * its {@code Content-Length} before a byte is kept, or as soon as the body passes the limit — never buffered
 * whole — and the connection closed once the rest of the body has come in, or after half a second), and 500 with
 * the message when the function throws. With {@link Builder#etags(boolean) etags} on, every answer carries an
 * {@code ETag} (a hash of its bytes) and a request whose {@code If-None-Match} matches gets 304 — the protocol
 * Metacontroller's {@code etag} option speaks.
 *
 * <p>With {@link Builder#tracing}, each call is a span that continues the caller's W3C trace ({@code traceparent}).
 *
 * <p>Threading: {@link Builder#route} functions run on the server's event loop and must not block; use
 * {@link Builder#routeAsync} for anything that waits.
 */
public final class HookServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HookServer.class);
  /** How long the rest of a body refused with 413 is read (and dropped) before the answer and the close. */
  static final Duration LINGER = Duration.ofMillis(500);
  /**
   * The default largest request body: Metareactor's requests carry the parent, its children and related objects,
   * which are tens of kilobytes in most controllers and a few megabytes in large ones.
   */
  public static final long DEFAULT_MAX_REQUEST_BYTES = 32L << 20;

  private final DisposableServer server;
  private final Map<String, BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>>> routes;
  private final boolean etags;
  private final long maxRequestBytes;
  private final ObjectMapper json = JsonMapper.builder().build();

  private HookServer(Builder builder) {
    HookTracing tracing = builder.tracing == null ? null : new HookTracing(builder.tracing);
    Map<String, BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>>> served = new LinkedHashMap<>(builder.routes);
    if (tracing != null) {
      served.replaceAll(tracing::traced);
    }
    this.routes = Map.copyOf(served);
    this.etags = builder.etags;
    this.maxRequestBytes = builder.maxRequestBytes;
    ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    this.server = HttpServer.create()
        .host(builder.host)
        .port(builder.port)
        .channelGroup(connections)
        .handle(this::handle)
        .bindNow();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The port the server listens on (the one the system picked when built with port 0). */
  public int port() {
    return ((InetSocketAddress) server.address()).getPort();
  }

  /** {@code http://<host>:<port><path>}, for a {@link WebhookSpec} in tests and examples. */
  public String url(String path) {
    InetSocketAddress address = (InetSocketAddress) server.address();
    String host = address.getAddress().isAnyLocalAddress() ? "127.0.0.1" : address.getHostString();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort() + path;
  }

  /** Stops accepting, lets requests in flight finish for up to 10 seconds, then closes. Blocks. */
  @Override
  public void close() {
    server.disposeNow(Duration.ofSeconds(10));
  }

  private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
    BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>> route = routes.get(request.fullPath());
    if (route == null) {
      return text(response, HttpResponseStatus.NOT_FOUND, "no hook at " + request.fullPath());
    }
    if (!request.method().equals(HttpMethod.POST)) {
      response.header(HttpHeaderNames.ALLOW, "POST");
      return text(response, HttpResponseStatus.METHOD_NOT_ALLOWED, "hooks answer POST only");
    }
    long declared = BodyCollector.contentLength(request.requestHeaders());
    if (declared > maxRequestBytes) {
      // Nothing read yet: what comes is read and dropped first, for LINGER at most.
      return request.receive().then().timeout(LINGER, Mono.empty()).onErrorResume(e -> Mono.empty())
          .then(tooLarge(response));
    }
    return request.receive()
        .reduceWith(() -> new BodyCollector((int) maxRequestBytes, maxRequestBytes, declared, bytes -> { },
            RequestTooLarge::new), BodyCollector::append)
        // The body's reading given up: what comes after it is dropped by the connection meanwhile.
        .onErrorResume(RequestTooLarge.class, e -> Mono.delay(LINGER).then(tooLarge(response))
            .then(Mono.<BodyCollector>empty()))
        .flatMap(collected -> {
          JsonNode body;
          try {
            body = json.readTree(collected.bytes(), 0, collected.length());
          } catch (JacksonException e) {
            return text(response, HttpResponseStatus.BAD_REQUEST, "request is not JSON: " + e.getOriginalMessage());
          }
          if (body == null || body.isMissingNode()) {
            return text(response, HttpResponseStatus.BAD_REQUEST, "request body is empty");
          }
          return Mono.defer(() -> route.apply(body, request.requestHeaders()))
              .map(json::writeValueAsBytes)
              .flatMap(answer -> json(request, response, answer))
              .onErrorResume(e -> {
                LOG.warn("hook {} failed", request.fullPath(), e);
                return text(response, HttpResponseStatus.INTERNAL_SERVER_ERROR, String.valueOf(e.getMessage()));
              });
        });
  }

  /**
   * 413, and the connection closed: the rest of the body is not worth keeping. The caller first lets it come in for
   * {@link #LINGER} at most, dropped as it comes: a socket closed with bytes unread answers the client's next ones
   * with a reset, which takes the 413 away from a client still sending its body before it has read the answer (one
   * in about 30 in a test, before).
   */
  private Mono<Void> tooLarge(HttpServerResponse response) {
    response.header(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    return text(response, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
        "request body exceeds the limit of " + maxRequestBytes + " bytes");
  }

  /** A request body passed the limit while it was read. */
  private static final class RequestTooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RequestTooLarge() {
      super("request body too large", null, false, false);
    }
  }

  private Mono<Void> json(HttpServerRequest request, HttpServerResponse response, byte[] answer) {
    if (etags) {
      String etag = etag(answer);
      response.header(HttpHeaderNames.ETAG, etag);
      if (etag.equals(request.requestHeaders().get(HttpHeaderNames.IF_NONE_MATCH))) {
        return response.status(HttpResponseStatus.NOT_MODIFIED).send();
      }
    }
    return response
        .header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
        .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(answer.length))
        .send(Mono.just(Unpooled.wrappedBuffer(answer)))
        .then();
  }

  private static Mono<Void> text(HttpServerResponse response, HttpResponseStatus status, String message) {
    return response.status(status)
        .header(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN)
        .sendString(Mono.just(message))
        .then();
  }

  private static String etag(byte[] answer) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(answer);
      return "\"" + HexFormat.of().formatHex(digest, 0, 16) + "\"";
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** Collects routes; not thread-safe. */
  public static final class Builder {
    private final Map<String, BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>>> routes = new LinkedHashMap<>();
    private String host = "127.0.0.1";
    private int port;
    private boolean etags;
    private long maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
    private @Nullable OpenTelemetry tracing;

    private Builder() {}

    /**
     * Traces every call of a route in {@code openTelemetry}: a {@code SERVER} span {@code POST <path>} that continues
     * the caller's trace from the request's headers (the engine's {@code traceparent} with {@code --tracing}), and is
     * {@link io.opentelemetry.api.trace.Span#current()} while the route's function runs, so that the hook's own
     * spans nest under it. Not set (the default): no span, no header read.
     */
    public Builder tracing(OpenTelemetry openTelemetry) {
      this.tracing = Objects.requireNonNull(openTelemetry, "openTelemetry");
      return this;
    }

    /** The interface to bind; loopback by default. */
    public Builder host(String newHost) {
      this.host = Objects.requireNonNull(newHost, "host");
      return this;
    }

    /** The port; 0 (the default) lets the system pick a free one. */
    public Builder port(int newPort) {
      if (newPort < 0 || newPort > 65_535) {
        throw new IllegalArgumentException("port out of range: " + newPort);
      }
      this.port = newPort;
      return this;
    }

    /** Whether answers carry ETags and matching {@code If-None-Match} requests get 304. */
    public Builder etags(boolean enabled) {
      this.etags = enabled;
      return this;
    }

    /**
     * The largest request body accepted ({@link #DEFAULT_MAX_REQUEST_BYTES} by default); a larger one gets 413
     * without being buffered.
     */
    public Builder maxRequestBytes(long bytes) {
      if (bytes < 1 || bytes > Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("maxRequestBytes must be between 1 and 2 GiB: " + bytes);
      }
      this.maxRequestBytes = bytes;
      return this;
    }

    /** A hook computed on the event loop: quick, non-blocking functions only. */
    public Builder route(String path, Function<JsonNode, JsonNode> hook) {
      Objects.requireNonNull(hook, "hook");
      return routeAsync(path, request -> Mono.just(hook.apply(request)));
    }

    /** A hook that answers later. */
    public Builder routeAsync(String path, Function<JsonNode, Mono<JsonNode>> hook) {
      Objects.requireNonNull(hook, "hook");
      return routeWithHeaders(path, (request, headers) -> hook.apply(request));
    }

    /** A hook that reads the request's headers too (which replica of a sharded engine calls, say). */
    public Builder routeWithHeaders(String path, BiFunction<JsonNode, HttpHeaders, Mono<JsonNode>> hook) {
      Objects.requireNonNull(path, "path");
      Objects.requireNonNull(hook, "hook");
      if (!path.startsWith("/")) {
        throw new IllegalArgumentException("path must start with '/': " + path);
      }
      if (routes.putIfAbsent(path, hook) != null) {
        throw new IllegalArgumentException("path already routed: " + path);
      }
      return this;
    }

    /** Binds and starts serving. Blocks until bound. */
    public HookServer start() {
      if (routes.isEmpty()) {
        throw new IllegalStateException("no routes");
      }
      return new HookServer(this);
    }
  }
}
