package dev.metareactor.engine.tracing;

import dev.metareactor.engine.kube.ApiException;
import dev.metareactor.engine.kube.ApiResource;
import dev.metareactor.engine.kube.AroundWritesApi;
import dev.metareactor.engine.kube.ObjectApi;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import reactor.core.publisher.Mono;

/**
 * The engine's {@link ObjectApi} with {@code --tracing}: every write made inside a traced sync is a {@code CLIENT}
 * span {@code <verb> <Kind>} under the sync's current span ({@link AroundWritesApi}'s verbs: {@code create
 * ConfigMap}, {@code status Thing}), with {@code metareactor.write.verb}, {@code k8s.object.kind}, {@code
 * k8s.namespace.name}, {@code k8s.object.name} and, when the API server refuses it, {@code
 * http.response.status_code}. Reads, dry runs, and writes outside a traced sync pass through untouched.
 */
public final class TracingObjectApi extends AroundWritesApi {

  public TracingObjectApi(ObjectApi api) {
    super(api);
  }

  @Override
  protected <T> Mono<T> around(String verb, ApiResource resource, String namespace, String name, Mono<T> write) {
    return Mono.deferContextual(context -> {
      SyncTrace trace = SyncTrace.of(context);
      if (trace == null) {
        return write;
      }
      Span span = trace.child(verb + " " + resource.kind(), SpanKind.CLIENT)
          .setAttribute("metareactor.write.verb", verb)
          .setAttribute("k8s.object.kind", resource.kind())
          .setAttribute("k8s.namespace.name", namespace)
          .setAttribute("k8s.object.name", name)
          .startSpan();
      return trace.traced(span, write.doOnError(error -> {
        int code = ApiException.codeOf(error);
        if (code > 0) {
          span.setAttribute("http.response.status_code", code);
        }
      }));
    });
  }
}
