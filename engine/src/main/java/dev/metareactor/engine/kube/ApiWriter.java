package dev.metareactor.engine.kube;

import dev.metareactor.engine.config.RateLimit;
import dev.metareactor.engine.discovery.ApiResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.Objects;
import java.util.concurrent.Callable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The one place every Kubernetes API call of a sync goes through (informers aside): a client-side rate limit
 * ({@code --client-go-qps}, {@code --client-go-burst}) applied with a timer, never by parking a thread; the
 * blocking fabric8 call on a bounded scheduler ({@code --api-concurrency} threads), never on an event loop; and a
 * count of every request in {@code metareactor_api_requests_total{verb,resource,code}}, so tests and operators
 * can see exactly what the engine did.
 *
 * <p>Results and failures come back as {@link Mono}s; a failed call surfaces its
 * {@link KubernetesClientException} (with the HTTP code) unchanged.
 */
public final class ApiWriter implements AutoCloseable {

  /** The request counter's name (Prometheus: {@code metareactor_api_requests_total}). */
  public static final String REQUESTS_METRIC = "metareactor.api.requests";

  private final KubernetesClient client;
  private final TokenBucket rate;
  private final Scheduler scheduler;
  private final MeterRegistry registry;

  public ApiWriter(KubernetesClient client, RateLimit rate, int concurrency, MeterRegistry registry) {
    this.client = Objects.requireNonNull(client, "client");
    this.rate = new TokenBucket(rate);
    this.registry = Objects.requireNonNull(registry, "registry");
    this.scheduler = Schedulers.newBoundedElastic(concurrency, Integer.MAX_VALUE, "kube-api", 60, true);
  }

  /** The scheduler blocking API calls run on (for callers that need one more blocking read of their own). */
  public Scheduler scheduler() {
    return scheduler;
  }

  public Mono<GenericKubernetesResource> get(ApiResource resource, String namespace, String name) {
    return call("get", resource, () -> resource(resource, namespace, name).get());
  }

  public Mono<GenericKubernetesResource> create(ApiResource resource, GenericKubernetesResource object) {
    return call("create", resource, () -> operation(resource, namespaceOf(object)).resource(object).create());
  }

  /** PUT of the whole object, carrying its resourceVersion: a conflict fails with HTTP 409. */
  public Mono<GenericKubernetesResource> update(ApiResource resource, GenericKubernetesResource object) {
    return call("update", resource, () -> operation(resource, namespaceOf(object)).resource(object).update());
  }

  /** PUT to the status subresource. */
  public Mono<GenericKubernetesResource> updateStatus(ApiResource resource, GenericKubernetesResource object) {
    return call("update-status", resource,
        () -> operation(resource, namespaceOf(object)).resource(object).updateStatus());
  }

  /** A patch of the given type ({@code json}, {@code merge}, {@code strategic}, server-side {@code apply}). */
  public Mono<GenericKubernetesResource> patch(ApiResource resource, String namespace, String name, PatchContext patch,
      String body) {
    return call("patch", resource, () -> resource(resource, namespace, name).patch(patch, body));
  }

  /** A patch of the status subresource. */
  public Mono<GenericKubernetesResource> patchStatus(ApiResource resource, String namespace, String name,
      PatchContext patch, String body) {
    return call("patch-status", resource, () -> resource(resource, namespace, name).subresource("status")
        .patch(patch, body));
  }

  /** A JSON merge patch. */
  public Mono<GenericKubernetesResource> mergePatch(ApiResource resource, String namespace, String name, String body) {
    return patch(resource, namespace, name, new PatchContext.Builder().withPatchType(PatchType.JSON_MERGE).build(), body);
  }

  /**
   * Deletes with background propagation and, when {@code uid} is given, a UID precondition (so an object
   * re-created under the same name is never deleted by mistake). Completes empty when the object is gone.
   */
  public Mono<Void> delete(ApiResource resource, String namespace, String name, String uid) {
    StringBuilder options = new StringBuilder("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",")
        .append("\"propagationPolicy\":\"Background\"");
    if (uid != null) {
      options.append(",\"preconditions\":{\"uid\":\"").append(uid).append("\"}");
    }
    String body = options.append('}').toString();
    // fabric8's DSL has no UID precondition; the raw call sends DeleteOptions as the request body.
    return call("delete", resource, () -> Optional.ofNullable(client.raw(path(resource, namespace, name), "DELETE", body)))
        .then();
  }

  /** The REST path of one object. */
  static String path(ApiResource resource, String namespace, String name) {
    StringBuilder path = new StringBuilder(resource.group().isEmpty() ? "/api/" : "/apis/" + resource.group() + "/")
        .append(resource.version());
    if (resource.namespaced()) {
      path.append("/namespaces/").append(namespace);
    }
    return path.append('/').append(resource.resource()).append('/').append(name).toString();
  }

  private <T> Mono<T> call(String verb, ApiResource resource, Callable<T> request) {
    return Mono.defer(() -> {
      Duration wait = rate.reserve();
      Mono<T> blocking = Mono.fromCallable(request).subscribeOn(scheduler)
          .doOnSuccess(result -> count(verb, resource, "2xx"))
          .doOnError(error -> count(verb, resource, codeOf(error)));
      return wait.isZero() ? blocking : Mono.delay(wait).then(blocking);
    });
  }

  private void count(String verb, ApiResource resource, String code) {
    Counter.builder(REQUESTS_METRIC)
        .description("Kubernetes API requests made by the engine (informer lists and watches excluded)")
        .tag("verb", verb)
        .tag("resource", resource.group().isEmpty() ? resource.resource() : resource.resource() + "." + resource.group())
        .tag("code", code)
        .register(registry)
        .increment();
  }

  private static String codeOf(Throwable error) {
    if (error instanceof KubernetesClientException e && e.getCode() > 0) {
      return Integer.toString(e.getCode());
    }
    return "error";
  }

  private NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
      Resource<GenericKubernetesResource>> operation(ApiResource resource, String namespace) {
    MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> op =
        client.genericKubernetesResources(resource.context());
    return resource.namespaced() ? op.inNamespace(namespace) : op;
  }

  private Resource<GenericKubernetesResource> resource(ApiResource resource, String namespace, String name) {
    return operation(resource, namespace).withName(name);
  }

  private static String namespaceOf(GenericKubernetesResource object) {
    return object.getMetadata().getNamespace();
  }

  @Override
  public void close() {
    scheduler.dispose();
  }
}
