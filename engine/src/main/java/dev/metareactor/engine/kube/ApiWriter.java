package dev.metareactor.engine.kube;

import dev.metareactor.apply.GoJson;
import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.ratelimit.TokenBucket;
import dev.metareactor.http.metrics.MetricCatalogue;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The one place every Kubernetes API call of a sync goes through (informers aside): a client-side rate limit
 * ({@code --client-go-qps}, {@code --client-go-burst}) applied with a timer, never by parking a thread, with a
 * bucket of its own for Events (see {@link #isEvent}); the request
 * itself non-blocking on {@link KubeApi}; and a count of every request in
 * {@code metareactor_api_requests_total{verb,resource,code}}, so tests and operators can see exactly what the engine
 * did.
 *
 * <p>Writes complete with the API server's answer ({@link Written}, parsed on demand), reads with the
 * {@link KubeObject}; a refused request fails with {@link ApiException} (with the HTTP code). As client-go's REST
 * client does, an answer of 429 or 5xx that says when to come back ({@code Retry-After}: a server shedding load,
 * or one that is starting and has not installed every path yet) is sent again after that delay, up to
 * {@value #MAX_RETRIES} times, each attempt counted and rate limited like any request; the sync that made it never
 * sees the answer unless the last attempt gets it too.
 */
public final class ApiWriter implements ObjectApi {

  /** How many times a request answered with {@code Retry-After} is sent again (client-go's default). */
  static final int MAX_RETRIES = 10;
  /** The longest wait a {@code Retry-After} gets (a longer one is cut to this). */
  static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(10);
  /**
   * The resourceVersion a create-only apply carries as its precondition ({@link #applyCreate}): the largest the API
   * server's storage can parse (etcd's revisions are unsigned 64-bit numbers), which no object ever reaches.
   */
  static final String NO_OBJECT_HAS_IT = "18446744073709551615";
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private final KubeApi api;
  private final TokenBucket rate;
  /**
   * The same limit again for Events alone: a storm of them (every parent failing at once, each with its burst of
   * {@code --events-burst}) must not queue the writes of children and status behind it. Upstream's Events go through
   * a client of their own, with a rate limiter of its own, too.
   */
  private final TokenBucket eventRate;
  private final MeterRegistry registry;
  private final Map<CounterKey, Counter> counters = new ConcurrentHashMap<>();

  private record CounterKey(String verb, ApiResource resource, String code) {}

  /**
   * With {@code dryRun}, every write of this writer is sent with {@code dryRun=All}: the API server validates,
   * defaults and admits it and answers with the object it would store, and stores nothing ({@code metareactor
   * preview}).
   */
  private final boolean dryRun;

  public ApiWriter(KubeApi api, RateLimit rate, MeterRegistry registry) {
    this(api, rate, registry, false);
  }

  /**
   * A writer whose every write is a server-side dry run when {@code dryRun} is set.
   */
  public ApiWriter(KubeApi api, RateLimit rate, MeterRegistry registry, boolean dryRun) {
    this.api = Objects.requireNonNull(api, "api");
    this.rate = new TokenBucket(rate);
    this.eventRate = new TokenBucket(rate);
    this.registry = Objects.requireNonNull(registry, "registry");
    this.dryRun = dryRun;
  }

  /** An uncached read. */
  @Override
  public Mono<KubeObject> get(ApiResource resource, String namespace, String name) {
    return call("get", resource, "GET", path(resource, namespace, name), null, null).map(Written::object);
  }

  /** Pages of 500, each counted as a {@code list}. */
  @Override
  public Mono<List<KubeObject>> list(ApiResource resource, String labelSelector, boolean metadataOnly) {
    String accept = metadataOnly ? "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
        : KubeApi.JSON;
    List<KubeObject> objects = new ArrayList<>();
    return Mono.defer(() -> page(resource, labelSelector, accept, "", objects))
        .expand(next -> next.isEmpty() ? Mono.empty() : page(resource, labelSelector, accept, next, objects))
        .then(Mono.fromSupplier(() -> List.copyOf(objects)));
  }

  /** One page into {@code objects}; completes with the continue token ({@code ""} after the last page). */
  private Mono<String> page(ApiResource resource, String labelSelector, String accept, String continueToken,
      List<KubeObject> objects) {
    String query = "?limit=500"
        + (labelSelector.isEmpty() ? "" : "&labelSelector=" + URLEncoder.encode(labelSelector, StandardCharsets.UTF_8))
        + (continueToken.isEmpty() ? "" : "&continue=" + URLEncoder.encode(continueToken, StandardCharsets.UTF_8));
    return count("list", resource, api.get(path(resource, "", null) + query, accept)).map(body -> {
      JsonNode list = KubeJson.readObjectTree(body);
      for (JsonNode item : list.path("items")) {
        if (item instanceof ObjectNode object) {
          objects.add(KubeObject.of(object));
        }
      }
      return list.path("metadata").path("continue").asString("");
    });
  }

  @Override
  public Mono<ObjectNode> getTree(ApiResource resource, String namespace, String name) {
    return call("get", resource, "GET", path(resource, namespace, name), null, null)
        .map(written -> (ObjectNode) KubeJson.readObjectTree(written.answer()));
  }

  /** {@code PATCH} with {@code application/apply-patch+yaml}, {@code force=true}; counted as {@code apply}. */
  @Override
  public Mono<Written> apply(ApiResource resource, ObjectNode configuration, String fieldManager, boolean dryRun) {
    String query = "?fieldManager=" + URLEncoder.encode(fieldManager, StandardCharsets.UTF_8) + "&force=true";
    return call(dryRun ? "apply-dry-run" : "apply", dryRun, resource, "PATCH",
        path(resource, namespaceOf(configuration), nameOf(configuration)) + query, PatchType.APPLY.contentType(),
        body(configuration));
  }

  /**
   * {@code PATCH} of the status subresource with {@code application/apply-patch+yaml}, {@code force=true}; counted as
   * {@code apply-status}.
   */
  @Override
  public Mono<Written> applyStatus(ApiResource resource, ObjectNode configuration, String fieldManager) {
    String query = "?fieldManager=" + URLEncoder.encode(fieldManager, StandardCharsets.UTF_8) + "&force=true";
    return call("apply-status", resource, "PATCH",
        path(resource, namespaceOf(configuration), nameOf(configuration)) + "/status" + query,
        PatchType.APPLY.contentType(), body(configuration));
  }

  /**
   * {@code PATCH} with {@code application/apply-patch+yaml} and {@code force=true} whose configuration carries the
   * resourceVersion {@value #NO_OBJECT_HAS_IT} as a precondition: the API server creates the object when none of
   * that name exists, and refuses with 409 {@code Conflict} (the resourceVersion differs) when one does, changing
   * nothing of it. Counted as {@code apply-create}.
   */
  @Override
  public Mono<Written> applyCreate(ApiResource resource, ObjectNode configuration, String fieldManager) {
    ObjectNode guarded = configuration.deepCopy();
    ((ObjectNode) guarded.get("metadata")).put("resourceVersion", NO_OBJECT_HAS_IT);
    String query = "?fieldManager=" + URLEncoder.encode(fieldManager, StandardCharsets.UTF_8) + "&force=true";
    return call("apply-create", resource, "PATCH",
        path(resource, namespaceOf(guarded), nameOf(guarded)) + query, PatchType.APPLY.contentType(), body(guarded));
  }

  /** A create; the namespace is the object's. The body is {@linkplain #body Go's serialization}. */
  @Override
  public Mono<Written> create(ApiResource resource, ObjectNode object) {
    return call("create", resource, "POST", path(resource, namespaceOf(object), null), KubeApi.JSON, body(object));
  }

  /**
   * PUT of the whole object, carrying its resourceVersion: a conflict fails with HTTP 409. The body is
   * {@linkplain #body Go's serialization}.
   */
  @Override
  public Mono<Written> update(ApiResource resource, ObjectNode object) {
    return call("update", resource, "PUT", path(resource, namespaceOf(object), nameOf(object)), KubeApi.JSON,
        body(object));
  }

  /**
   * The body of a create, an update or a patch: the tree as Metacontroller's Go client writes it ({@link GoJson}), so
   * the API server reads every number as it would from Metacontroller. A hook's {@code 3.0} or {@code 3E+0} goes
   * out as {@code 3}: a typed field such as a Deployment's {@code spec.replicas} (int32) rejects the {@code 3.0}
   * Jackson would write.
   */
  static byte[] body(JsonNode object) {
    return GoJson.marshalUtf8(object);
  }

  /** A patch of the given type. */
  @Override
  public Mono<Written> patch(ApiResource resource, String namespace, String name, PatchType type, JsonNode body) {
    return call("patch", resource, "PATCH", path(resource, namespace, name), type.contentType(), body(body));
  }

  /** A patch of the status subresource. */
  @Override
  public Mono<Written> patchStatus(ApiResource resource, String namespace, String name, PatchType type,
      JsonNode body) {
    return call("patch-status", resource, "PATCH", path(resource, namespace, name) + "/status", type.contentType(),
        body(body));
  }

  /**
   * Deletes with background propagation and, when {@code uid} is given, a UID precondition (so an object
   * re-created under the same name is never deleted by mistake). Completes empty when the object is gone.
   */
  @Override
  public Mono<Void> delete(ApiResource resource, String namespace, String name, @Nullable String uid) {
    StringBuilder options = new StringBuilder("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",")
        .append("\"propagationPolicy\":\"Background\"");
    if (uid != null) {
      options.append(",\"preconditions\":{\"uid\":\"").append(uid).append("\"}");
    }
    byte[] body = utf8(options.append('}').toString());
    return count("delete", resource, api.send("DELETE", dryRun(path(resource, namespace, name), false), KubeApi.JSON,
        body)).then();
  }

  @Override
  public Mono<Void> deleteAt(ApiResource resource, String namespace, String name, String resourceVersion) {
    byte[] body = utf8("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"resourceVersion\":"
        + KubeJson.quote(resourceVersion) + "}}");
    return count("delete", resource, api.send("DELETE", dryRun(path(resource, namespace, name), false), KubeApi.JSON,
        body))
        .then()
        .onErrorResume(e -> ApiException.codeOf(e) == 404, e -> Mono.empty());
  }

  /**
   * The REST path of a resource's collection ({@code name == null}) or one of its objects, each segment
   * percent-encoded ({@link #segment}).
   *
   * @throws IllegalArgumentException when the namespace or name is not one path segment (empty, {@code .},
   *     {@code ..}, or with a {@code /} or {@code %}: the API server decodes {@code %2F} before it routes, so
   *     {@code a%2Fstatus} would address the status of {@code a}): no request may address another path than the
   *     object's
   */
  public static String path(ApiResource resource, @Nullable String namespace, @Nullable String name) {
    StringBuilder path = new StringBuilder(resource.group().isEmpty() ? "/api/"
        : "/apis/" + segment(resource.group()) + "/").append(segment(resource.version()));
    if (resource.namespaced() && namespace != null && !namespace.isEmpty()) {
      path.append("/namespaces/").append(objectSegment(namespace, "namespace"));
    }
    path.append('/').append(segment(resource.resource()));
    return name == null ? path.toString() : path.append('/').append(objectSegment(name, "name")).toString();
  }

  private static String objectSegment(String value, String what) {
    ObjectNames.Rule.PATH_SEGMENT.problem(value).ifPresent(problem -> {
      throw new IllegalArgumentException("the " + what + " " + KubeJson.quote(value) + " " + problem);
    });
    return segment(value);
  }

  /**
   * {@code value} as one path segment of a URL (RFC 3986): every byte of its UTF-8 form but the unreserved
   * characters ({@code A-Z a-z 0-9 - . _ ~}) and {@code :} (which RBAC names hold) percent-encoded, so that a
   * {@code ?}, {@code #}, space or any other character reaches the server as part of the segment.
   */
  public static String segment(String value) {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    StringBuilder encoded = null;
    for (int i = 0; i < bytes.length; i++) {
      int b = bytes[i] & 0xff;
      boolean plain = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '.'
          || b == '_' || b == '~' || b == ':';
      if (plain) {
        if (encoded != null) {
          encoded.append((char) b);
        }
        continue;
      }
      if (encoded == null) {
        encoded = new StringBuilder(bytes.length + 16).append(value, 0, i); // the bytes before are ASCII
      }
      encoded.append('%').append(HEX[b >> 4]).append(HEX[b & 0xf]);
    }
    return encoded == null ? value : encoded.toString();
  }


  private Mono<Written> call(String verb, ApiResource resource, String method, String path,
      @Nullable String contentType, byte @Nullable [] body) {
    return call(verb, false, resource, method, path, contentType, body);
  }

  private Mono<Written> call(String verb, boolean dryRunThis, ApiResource resource, String method, String path,
      @Nullable String contentType, byte @Nullable [] body) {
    String sent = method.equals("GET") ? path : dryRun(path, dryRunThis);
    return count(verb, resource, api.send(method, sent, contentType, body)).map(Written::new);
  }

  /** {@code path} with {@code dryRun=All} added when this writer or the request ({@code dryRunThis}) is a dry run. */
  private String dryRun(String path, boolean dryRunThis) {
    return dryRun || dryRunThis ? path + (path.indexOf('?') < 0 ? '?' : '&') + "dryRun=All" : path;
  }

  /** Whether {@code resource} is Events (core {@code v1} or {@code events.k8s.io}): they have a bucket of their own. */
  public static boolean isEvent(ApiResource resource) {
    return resource.resource().equals("events")
        && (resource.group().isEmpty() || resource.group().equals("events.k8s.io"));
  }

  private <T> Mono<T> count(String verb, ApiResource resource, Mono<T> request) {
    TokenBucket bucket = isEvent(resource) ? eventRate : rate;
    return Mono.defer(() -> {
      Duration wait = bucket.reserve();
      Mono<T> counted = request
          .doOnSuccess(result -> counter(verb, resource, "2xx").increment())
          .doOnError(error -> counter(verb, resource, codeOf(error)).increment());
      return wait.isZero() ? counted : Mono.delay(wait).then(counted);
    }).retryWhen(Retry.from(failures -> failures.concatMap(failure -> {
      Duration after = retryAfter(failure.failure());
      return after != null && failure.totalRetries() < MAX_RETRIES ? Mono.delay(after)
          : Mono.error(failure.failure());
    })));
  }

  /** When to send a request again that failed with {@code error}, or {@code null} not to. */
  private static @Nullable Duration retryAfter(Throwable error) {
    Duration after = ApiException.retryAfterOf(error);
    return after == null || after.compareTo(MAX_RETRY_AFTER) <= 0 ? after : MAX_RETRY_AFTER;
  }

  private Counter counter(String verb, ApiResource resource, String code) {
    return counters.computeIfAbsent(new CounterKey(verb, resource, code), key -> MetricCatalogue.API_REQUESTS.counter()
        .tag("verb", verb)
        .tag("resource", resource.group().isEmpty() ? resource.resource()
            : resource.resource() + "." + resource.group())
        .tag("code", code)
        .register(registry));
  }

  /** The code label of a failed request: the HTTP code, {@code refused} when the fence kept it back, else error. */
  private static String codeOf(Throwable error) {
    if (error instanceof WriteFence.Refused) {
      return "refused";
    }
    return error instanceof ApiException e && e.code() > 0 ? Integer.toString(e.code()) : "error";
  }

  private static String namespaceOf(JsonNode object) {
    return object.path("metadata").path("namespace").asString("");
  }

  private static String nameOf(JsonNode object) {
    return object.path("metadata").path("name").asString("");
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
